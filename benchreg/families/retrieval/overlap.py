"""When a result hits a gold region (both of the same source), and how much a result spans.

Spec 004 section 5: gold must land on a region, "otherwise whole-file chunking also scores full
marks". So a result hits a gold region only when it overlaps it **and is not much coarser than
it**; a whole-source result never hits, except for image, whose gold region is the whole image.
The limits are resolver params (:class:`HitRules`, task entry `resolver.params`), defaults
after each field's convention. For a result region r and a gold region g of one entry (G_s:
the entry's gold regions of the same source):

- pdf: g.page in [r.page_start, r.page_end] and r spans at most `pdf_max_pages` pages
  (default 1); blocks agree when both give one (a page result covers the blocks of its page);
- image: always (the gold is the whole image);
- ui_screenshot: IoU(r, g) >= `ui_min_iou` (default 0.5: referring-expression grounding is
  scored as accuracy at IoU 0.5, RefCOCO, UIBert);
- video: IoU(r, g) >= `video_min_iou` (default 0.5: moment retrieval R1@IoU=0.5,
  QVHighlights) and |r ∩ ∪G_s| / |r| >= `video_min_precision` (default 0.5: at least half of
  the result lies in the entry's gold windows);
- conversation: g.turn in r and |turns(r) ∩ turns(G_s)| / |turns(r)| >=
  `conversation_min_precision` (default 0.5: at least half of the result's turns are gold);
- code: same path, and for a gold symbol: r names it or one of its members (`Session.request`
  for `Session`; never a parent), or r is a line range of at most `code_max_lines` lines
  (default 50) overlapping the symbol's own lines; for a gold line L: r is a line range (or a
  symbol) of at most `code_max_lines` lines holding L.

IoU(a, b) = |a ∩ b| / |a ∪ b| (areas for boxes, lengths for intervals). A code symbol's lines come
from the corpus (codesymbols.py): without the source's files a line range cannot hit a symbol.

The extent of a result (what `context_at_k` averages): pdf pages touched, 1 per image, the
share of the screen a (normalised) box covers, clipped to the screen (a box past an edge counts
its part on the screen; a box in pixels is unknown), seconds, turns, code lines (a symbol: its
line count; unknown without the corpus).
Regions are assumed valid (see regions.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.codesymbols import Symbol

Region = Mapping[str, Any]
Spans = Callable[[str], Mapping[str, Symbol] | None]  # path -> symbols of that file (or None)

UNITS = {
    "pdf": "pages",
    "image": "images",
    "ui_screenshot": "share of the screen",
    "video": "seconds",
    "code": "lines",
    "conversation": "turns",
}


@dataclass(frozen=True, slots=True)
class HitRules:
    """How much coarser than a gold region a result may be and still hit it."""

    pdf_max_pages: int = 1
    ui_min_iou: float = 0.5
    video_min_iou: float = 0.5
    video_min_precision: float = 0.5
    conversation_min_precision: float = 0.5
    code_max_lines: int = 50

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name.endswith(("_iou", "_precision")) and not 0.0 <= value <= 1.0:
                raise BenchregError(f"resolver param {f.name} must lie in [0, 1], got {value}")
            if f.name.endswith(("_pages", "_lines")) and value < 1:
                raise BenchregError(f"resolver param {f.name} must be >= 1, got {value}")


@dataclass(slots=True)
class SourceGold:
    """An entry's gold regions of one source, and what the precision rules need of them."""

    modality: str
    regions: list[Region]
    spans: Spans | None = None
    _turns: frozenset[int] | None = None
    _windows: list[tuple[float, float]] | None = None

    @property
    def turns(self) -> frozenset[int]:
        if self._turns is None:
            self._turns = frozenset(r["turn"] for r in self.regions if "turn" in r)
        return self._turns

    @property
    def windows(self) -> list[tuple[float, float]]:
        """The union of the gold windows, as disjoint sorted intervals."""
        if self._windows is None:
            merged: list[tuple[float, float]] = []
            for start, end in sorted((r["t_start"], r["t_end"]) for r in self.regions):
                if merged and start <= merged[-1][1]:
                    merged[-1] = (merged[-1][0], max(merged[-1][1], end))
                else:
                    merged.append((start, end))
            self._windows = merged
        return self._windows


def _span(region: Region, unit: str) -> tuple[int, int] | None:
    if unit in region:
        return region[unit], region[unit]
    if f"{unit}_start" in region:
        return region[f"{unit}_start"], region[f"{unit}_end"]
    return None


def _inside(value: int, span: tuple[int, int] | None) -> bool:
    return span is not None and span[0] <= value <= span[1]


def _length(a: tuple[float, float], b: tuple[float, float]) -> float:
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def interval_iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    inter = _length(a, b)
    union = (a[1] - a[0]) + (b[1] - b[0]) - inter
    return inter / union if union > 0 else 0.0


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def pdf_hit(result: Region, gold: Region, ctx: SourceGold, rules: HitRules) -> bool:
    span = _span(result, "page")
    if span is None or span[1] - span[0] + 1 > rules.pdf_max_pages:
        return False
    if not _inside(gold["page"], span):
        return False
    return "block" not in result or "block" not in gold or result["block"] == gold["block"]


def image_hit(result: Region, gold: Region, ctx: SourceGold, rules: HitRules) -> bool:
    return True


def ui_hit(result: Region, gold: Region, ctx: SourceGold, rules: HitRules) -> bool:
    iou = box_iou(result["bbox"], gold["bbox"])
    return iou > 0 and iou >= rules.ui_min_iou


def video_hit(result: Region, gold: Region, ctx: SourceGold, rules: HitRules) -> bool:
    r = (result["t_start"], result["t_end"])
    g = (gold["t_start"], gold["t_end"])
    iou = interval_iou(r, g)
    if iou <= 0 or iou < rules.video_min_iou:
        return False
    inside = sum(_length(r, w) for w in ctx.windows)
    return inside / (r[1] - r[0]) >= rules.video_min_precision


def conversation_hit(result: Region, gold: Region, ctx: SourceGold, rules: HitRules) -> bool:
    span = _span(result, "turn")
    if not _inside(gold["turn"], span):
        return False
    assert span is not None
    if span[0] == span[1]:
        return True
    gold_turns = sum(1 for t in ctx.turns if span[0] <= t <= span[1])
    return gold_turns / (span[1] - span[0] + 1) >= rules.conversation_min_precision


def _symbol(ctx: SourceGold, path: str, name: str) -> Symbol | None:
    found = ctx.spans(path) if ctx.spans is not None else None
    return found.get(name) if found else None


def code_hit(result: Region, gold: Region, ctx: SourceGold, rules: HitRules) -> bool:
    path = gold["path"]
    if result["path"] != path:
        return False
    lines = _span(result, "line")
    if "symbol" in gold:
        name = gold["symbol"]
        if "symbol" in result:
            return result["symbol"] == name or result["symbol"].startswith(name + ".")
        assert lines is not None
        if lines[1] - lines[0] + 1 > rules.code_max_lines:
            return False
        symbol = _symbol(ctx, path, name)
        return symbol is not None and symbol.owns_any(*lines)
    line = gold["line"]
    if lines is None:
        symbol = _symbol(ctx, path, result["symbol"])
        if symbol is None:
            return False
        lines = (symbol.start, symbol.end)
    return lines[1] - lines[0] + 1 <= rules.code_max_lines and _inside(line, lines)


Hit = Callable[[Region, Region, SourceGold, HitRules], bool]
HIT: dict[str, Hit] = {
    "pdf": pdf_hit,
    "image": image_hit,
    "ui_screenshot": ui_hit,
    "video": video_hit,
    "code": code_hit,
    "conversation": conversation_hit,
}


def hits(
    modality: str,
    result: Region,
    gold: Region,
    *,
    rules: HitRules | None = None,
    others: Sequence[Region] | None = None,
    spans: Spans | None = None,
) -> bool:
    """Whether a result region hits a gold region of the same source (``others``: every gold
    region of the entry in that source, ``gold`` included; default: ``gold`` alone)."""
    ctx = SourceGold(modality, list(others) if others is not None else [gold], spans)
    return HIT[modality](result, gold, ctx, rules or HitRules())


# a box with a coordinate beyond these is in pixels, not in screen units: no normalised box of
# an element on the screen lies a whole screen off it
SCREEN_UNITS = (-1.0, 2.0)


def screen_share(box: Sequence[float]) -> float | None:
    """The share of the screen a normalised box covers, the box clipped to the screen (an
    element that extends past an edge counts the part on the screen; one wholly off it, 0);
    None for a box in pixels (:data:`SCREEN_UNITS`: the screen size is not known here)."""
    lo, hi = SCREEN_UNITS
    if min(box) < lo or max(box) > hi:
        return None
    x0, y0, x1, y1 = (min(max(float(v), 0.0), 1.0) for v in box)
    return (x1 - x0) * (y1 - y0)


def extent(modality: str, region: Region, spans: Spans | None = None) -> float | None:
    """How much a result region spans, in the modality's unit (:data:`UNITS`); None when it
    cannot be told (a code symbol without the corpus, a box in pixels)."""
    if modality == "image":
        return 1.0
    if modality == "video":
        return float(region["t_end"] - region["t_start"])
    if modality == "ui_screenshot":
        return screen_share(region["bbox"])
    unit = {"pdf": "page", "conversation": "turn", "code": "line"}[modality]
    span = _span(region, unit)
    if span is not None:
        return float(span[1] - span[0] + 1)
    symbol = spans(region["path"]) if spans is not None else None
    found = symbol.get(region["symbol"]) if symbol else None
    return float(found.lines) if found is not None else None
