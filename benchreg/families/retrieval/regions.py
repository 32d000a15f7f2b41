"""Region shapes per modality (spec 004 section 3), for gold and for results.

Gold regions use the spec's shapes; results may also use ranges for atoms longer than one unit
(pdf pages, code lines, conversation turns). A region is a JSON object; these functions say
what is wrong with one, or None.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

MODALITIES = ("pdf", "image", "ui_screenshot", "video", "code", "conversation")

GOLD_SHAPES: dict[str, tuple[frozenset[str], ...]] = {
    "pdf": (frozenset({"page"}), frozenset({"page", "block"})),
    "image": (frozenset(),),
    "ui_screenshot": (frozenset({"bbox"}),),
    "video": (frozenset({"t_start", "t_end"}),),
    "code": (frozenset({"path", "symbol"}), frozenset({"path", "line"})),
    "conversation": (frozenset({"turn"}),),
}
RANGE_SHAPES: dict[str, tuple[frozenset[str], ...]] = {
    "pdf": (frozenset({"page_start", "page_end"}),),
    "code": (frozenset({"path", "line_start", "line_end"}),),
    "conversation": (frozenset({"turn_start", "turn_end"}),),
}
WHOLE_FILE_FORBIDDEN = frozenset({"pdf", "code", "video"})  # gold must name a region there
MINIMUM = {"page": 1, "page_start": 1, "page_end": 1, "line": 1, "line_start": 1, "line_end": 1}


def _shape_text(shape: frozenset[str]) -> str:
    return "{" + ", ".join(sorted(shape)) + "}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    )


def region_problem(modality: str, region: Any, *, gold: bool) -> str | None:
    """Why ``region`` is not a valid gold (or result) region of ``modality``; None if it is."""
    if not isinstance(region, Mapping):
        return f"region must be an object, got {type(region).__name__}"
    keys = frozenset(region)
    shapes = GOLD_SHAPES[modality] + (() if gold else RANGE_SHAPES.get(modality, ()))
    if gold and not keys - {"path"} and modality in WHOLE_FILE_FORBIDDEN:
        return f"whole-file gold is not allowed for {modality}: name a region"
    if keys not in shapes:
        allowed = " or ".join(_shape_text(s) for s in shapes)
        return f"{modality} region must be {allowed}, got {_shape_text(keys)}"
    return _value_problem(region)


def _value_problem(region: Mapping[str, Any]) -> str | None:
    for key in ("page", "block", "turn", "line", "page_start", "page_end", "line_start",
                "line_end", "turn_start", "turn_end"):
        if key in region:
            value = region[key]
            if not _is_int(value) or value < MINIMUM.get(key, 0):
                return f"{key} must be an integer >= {MINIMUM.get(key, 0)}, got {value!r}"
    for key in ("path", "symbol"):
        if key in region and (not isinstance(region[key], str) or not region[key]):
            return f"{key} must be a non-empty string, got {region[key]!r}"
    for lo, hi in (("page_start", "page_end"), ("line_start", "line_end"),
                   ("turn_start", "turn_end")):
        if lo in region and region[lo] > region[hi]:
            return f"{lo} {region[lo]} is after {hi} {region[hi]}"
    if "bbox" in region:
        box = region["bbox"]
        if (not isinstance(box, list) or len(box) != 4 or not all(map(_is_number, box))):
            return f"bbox must be [x0, y0, x1, y1] (4 numbers), got {box!r}"
        if not (box[0] < box[2] and box[1] < box[3]):
            return f"bbox {box} has no area (needs x0 < x1 and y0 < y1)"
    if "t_start" in region:
        start, end = region["t_start"], region["t_end"]
        if not (_is_number(start) and _is_number(end)):
            return f"t_start and t_end must be numbers, got {start!r}, {end!r}"
        if not 0 <= start < end:
            return f"video interval [{start}, {end}] must satisfy 0 <= t_start < t_end"
    return None


def _nat(value: Any, least: int = 0) -> bool:
    return type(value) is int and value >= least


def _text(value: Any) -> bool:
    return type(value) is str and value != ""


def _common_pdf(region: dict[str, Any]) -> bool:
    n = len(region)
    return (n == 1 and _nat(region.get("page"), 1)) or (
        n == 2 and _nat(region.get("page"), 1) and _nat(region.get("block"))
    )


def _common_ui(region: dict[str, Any]) -> bool:
    box = region.get("bbox")
    if len(region) != 1 or type(box) is not list or len(box) != 4:
        return False
    x0, y0, x1, y1 = box
    # with x0 < x1 (false for NaN), -inf < x0 and x1 < inf make both finite
    return (type(x0) is type(y0) is type(x1) is type(y1) is float
            and -math.inf < x0 < x1 < math.inf and -math.inf < y0 < y1 < math.inf)


def _common_video(region: dict[str, Any]) -> bool:
    start, end = region.get("t_start"), region.get("t_end")
    return (len(region) == 2 and type(start) is float and type(end) is float
            and 0.0 <= start < end < math.inf)


def _common_code(region: dict[str, Any]) -> bool:
    if len(region) != 2 or not _text(region.get("path")):
        return False
    return _text(region.get("symbol")) or _nat(region.get("line"), 1)


COMMON: dict[str, Callable[[dict[str, Any]], bool]] = {
    "conversation": lambda r: len(r) == 1 and _nat(r.get("turn")),
    "pdf": _common_pdf,
    "image": lambda r: len(r) == 0,
    "ui_screenshot": _common_ui,
    "video": _common_video,
    "code": _common_code,
}


def common_region(modality: str, region: Any) -> bool:
    """A fast check of the most common valid shapes (single-unit regions, float boxes and
    times); False means "look closer with :func:`region_problem`", not "invalid"."""
    return type(region) is dict and COMMON[modality](region)
