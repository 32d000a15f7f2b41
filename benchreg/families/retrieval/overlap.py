"""When a result region hits a gold region (both of the same source), per modality.

- pdf: the gold page lies in the result's page (range), and the blocks agree when both give one
  (a page-level result covers every block of its page);
- image: always (the whole image);
- ui_screenshot: the boxes intersect with positive area;
- video: the intervals intersect with positive length;
- code: same path, and the symbols agree or the gold symbol is a member of the result's
  (`Session` covers `Session.request`), or the gold line lies in the result's line (range);
- conversation: the gold turn lies in the result's turn (range).
Regions are assumed valid (see regions.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Region = Mapping[str, Any]


def _span(region: Region, unit: str) -> tuple[int, int] | None:
    if unit in region:
        return region[unit], region[unit]
    if f"{unit}_start" in region:
        return region[f"{unit}_start"], region[f"{unit}_end"]
    return None


def _inside(value: int, span: tuple[int, int] | None) -> bool:
    return span is not None and span[0] <= value <= span[1]


def pdf_hit(result: Region, gold: Region) -> bool:
    if not _inside(gold["page"], _span(result, "page")):
        return False
    return "block" not in result or "block" not in gold or result["block"] == gold["block"]


def image_hit(result: Region, gold: Region) -> bool:
    return True


def ui_hit(result: Region, gold: Region) -> bool:
    a, b = result["bbox"], gold["bbox"]
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def video_hit(result: Region, gold: Region) -> bool:
    return min(result["t_end"], gold["t_end"]) > max(result["t_start"], gold["t_start"])


def code_hit(result: Region, gold: Region) -> bool:
    if result["path"] != gold["path"]:
        return False
    if "symbol" in gold:
        symbol = result.get("symbol")
        return symbol is not None and (
            gold["symbol"] == symbol or gold["symbol"].startswith(symbol + ".")
        )
    return _inside(gold["line"], _span(result, "line"))


def conversation_hit(result: Region, gold: Region) -> bool:
    return _inside(gold["turn"], _span(result, "turn"))


HIT: dict[str, Callable[[Region, Region], bool]] = {
    "pdf": pdf_hit,
    "image": image_hit,
    "ui_screenshot": ui_hit,
    "video": video_hit,
    "code": code_hit,
    "conversation": conversation_hit,
}


def hits(modality: str, result: Region, gold: Region) -> bool:
    """Whether a result region hits a gold region of the same source."""
    return HIT[modality](result, gold)
