"""Where a bar chart's texts go, so that a figure reads at a glance: legend rows that pygal
lays out inside the picture, and each bar's value written right of its bar and its whisker (never
over the error bar).

pygal (3.x) reserves room for ``n // columns`` legend rows below the plot but draws
``ceil(n / columns)``: the last, partial row fell below the SVG's edge. :func:`legend_layout`
picks the columns and the bottom margin that make up the difference. pygal writes a horizontal
bar's value across the bar's end, where the whisker of its confidence interval is drawn:
:func:`values_clear_of_whiskers` (an XML filter) moves each value past both.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CHAR_WIDTH = 0.62  # of the font size: a generous mean width of a sans-serif character
VALUE_GAP = 4.0  # px between a bar's (or its whisker's) end and its value
MAX_LEGEND_COLUMNS = 4
# a white halo keeps a value legible where it crosses a grid line (important: pygal's own style
# sets `stroke: none !important` on every text)
HALO = "stroke:white !important;stroke-width:3px;paint-order:stroke;stroke-linejoin:round"
LEGEND_ROW_STEP = 1.5  # pygal's distance between legend rows, in legend entry heights


def text_width(text: str, font_size: float) -> float:
    """The width of ``text`` in px, over-estimated rather than under."""
    return len(text) * CHAR_WIDTH * font_size


@dataclass(frozen=True, slots=True)
class LegendLayout:
    columns: int
    rows: int
    extra_bottom: float  # px pygal does not reserve for the legend but draws it in


def legend_layout(
    names: Sequence[str], plot_width: float, font_size: float, box: float
) -> LegendLayout:
    """As many columns (up to :data:`MAX_LEGEND_COLUMNS`) as fit the longest name in the plot's
    width, and the bottom margin that pygal's row count leaves out."""
    n = max(1, len(names))
    longest = max((text_width(name, font_size) for name in names), default=0.0) + box + 10
    fitting = max(1, int(plot_width // longest))
    columns = min(n, MAX_LEGEND_COLUMNS, fitting)
    rows = math.ceil(n / columns)
    reserved = n // columns  # what pygal leaves room for
    entry = max(font_size, box)
    return LegendLayout(columns, rows, (rows - reserved) * LEGEND_ROW_STEP * entry)


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _local(tag: Any) -> str:
    return str(tag).rsplit("}", 1)[-1]


def _classes(node: Any) -> set[str]:
    return set((node.get("class") or "").split())


def _series_key(node: Any) -> str | None:
    return next((c for c in _classes(node) if c.startswith("serie-")), None)


def _groups(root: Any, kind: str) -> list[Any]:
    return [n for n in root.iter() if _local(n.tag) == "g" and kind in _classes(n)]


def _rect(node: Any) -> tuple[float, float, float, float] | None:
    """A bar's (top, bottom, left, right); None for any other node."""
    if _local(node.tag) != "rect" or "rect" not in _classes(node):
        return None
    try:
        x, y = float(node.get("x")), float(node.get("y"))
        w, h = float(node.get("width")), float(node.get("height"))
    except (TypeError, ValueError):  # an empty bar (pygal draws none for a missing value)
        return None
    return (y, y + h, x, x + w)


def _extents(root: Any) -> dict[str, list[tuple[float, float, float, float]]]:
    """Per series: each bar's (top, bottom, left, right) in plot coordinates, its whisker's
    ends included."""
    found: dict[str, list[tuple[float, float, float, float]]] = {}
    for plot in _groups(root, "plot"):
        for series in plot:
            key = _series_key(series)
            if key is None:
                continue
            for node in series.iter():
                box = _rect(node)
                if box is not None:
                    found.setdefault(key, []).append(box)
                elif _local(node.tag) == "path" and node.get("d"):
                    numbers = [float(v) for v in _NUMBER.findall(node.get("d"))]
                    xs, ys = numbers[0::2], numbers[1::2]
                    if xs and ys:
                        found.setdefault(key, []).append((min(ys), max(ys), min(xs), max(xs)))
    return found


def haloed_values(root: Any) -> Any:
    """Every value text with a white halo, legible where it crosses a grid line or a bar."""
    for text in root.iter():
        if _local(text.tag) == "text" and "value" in _classes(text):
            text.set("style", HALO)
    return root


def values_clear_of_whiskers(root: Any) -> Any:
    """Each value text of a horizontal bar chart moved right of everything drawn in its row of
    its series (the bar and its whisker), left-aligned: the value never sits on the error bar.
    A negative bar's value too goes right of its whisker (or of zero), where it has room."""
    extents = _extents(root)
    for overlay in _groups(root, "text-overlay"):
        for series in overlay:
            spans = extents.get(_series_key(series) or "", [])
            for text in (t for t in series.iter() if _local(t.tag) == "text"):
                if text.get("y") is None:
                    continue
                y = float(text.get("y"))
                # pygal writes a value about a third of its font below the bar's middle
                row = [s for s in spans if s[0] - 1 <= y - 3 <= s[1] + 1]
                if row:
                    text.set("x", f"{max(s[3] for s in row) + VALUE_GAP:.2f}")
                    text.set("text-anchor", "start")
    return root
