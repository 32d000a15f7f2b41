"""Drawing helpers for report figures, with pygal (pure-Python SVG charts). Each figure function
returns SVG text, or None when there is nothing to draw.

Import this module only where a figure is drawn: pygal is an optional extra
(`benchreg[reports]`); without it the import raises ImportError, which the report turns into a
note saying how to install it.

The SVG is static (no script: pygal's tooltip script is not linked) and the same data gives the
same file (the chart's id, which scopes its CSS, is derived from the figure's name, not drawn at
random). Horizontal charts list their first label at the top, as a table reads. Several charts
of one figure (a panel per group) are stacked into one SVG by :func:`stack`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pygal
from pygal.style import Style

from benchreg.core.figure_layout import (
    VALUE_GAP,
    haloed_values,
    legend_layout,
    text_width,
    values_clear_of_whiskers,
)

# One colour meaning per page: green, red and grey say pass, fail and not testable wherever they
# appear, so the series colours (which only tell series apart) are none of them.
PALETTE = ("#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79")
PASS, FAIL, NA = "#2ca02c", "#d62728", "#9e9e9e"
WIDTH = 820  # px: every figure's width, so that they line up on the report page
LEGEND_ROW = 22  # px: a row of legend entries below the plot
MARGIN = 12  # px around each chart
VALUE_FONT = 11  # px: the values written at the bars
XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n'

STYLE = Style(
    background="white",
    plot_background="white",
    foreground="#222",
    foreground_strong="#111",
    foreground_subtle="#999",
    font_family="sans-serif",
    title_font_size=14,
    label_font_size=11,
    major_label_font_size=11,
    legend_font_size=11,
    value_font_size=VALUE_FONT,
    tooltip_font_size=10,
    colors=PALETTE,
    opacity="0.85",
    opacity_hover="0.85",
    guide_stroke_dasharray="2,3",
)


def finite(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def point(
    value: float,
    ci: Sequence[float] | None = None,
    *,
    text: str | None = None,
    color: str | None = None,
) -> dict[str, Any]:
    """One bar's value for pygal: its 95% CI as whiskers (when known), the text written at the
    bar (``text``; default: the chart's value formatter) and its own colour."""
    out: dict[str, Any] = {"value": value}
    if ci and all(finite(c) for c in ci):
        out["ci"] = {"low": float(ci[0]), "high": float(ci[1])}
    if text is not None:
        out["formatter"] = lambda _value, text=text: text
    if color is not None:
        out["color"] = color
    return out


def horizontal_bars(
    title: str,
    labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[dict[str, Any] | None]]],
    *,
    x_title: str = "",
    value_range: tuple[float, float] | None = None,
    digits: int = 3,
    legend: bool | None = None,
) -> pygal.HorizontalBar:
    """A horizontal bar chart: one row per label (the first at the top), one bar per series in
    each row (None: no bar), each value written right of its bar and whisker. ``legend``: shown
    below the plot, inside the picture, when there are several series unless told."""
    legend = len(series) > 1 if legend is None else legend
    bars = [v for _, values in series for v in values if v is not None]
    if value_range is None:  # pygal's own range leaves the CIs out: a whisker would be cut
        value_range = _span(bars)
    formatter = _value_formatter(digits)
    longest_value = max((text_width(_text(p, formatter), VALUE_FONT) for p in bars), default=0)
    margin_right = max(40, math.ceil(longest_value + VALUE_GAP + MARGIN))
    label_width = max((text_width(label, STYLE.label_font_size) for label in labels), default=0)
    layout = legend_layout(
        [name for name, _ in series] if legend else [],
        WIDTH - label_width - margin_right - 3 * MARGIN,  # about the plot's width
        STYLE.legend_font_size,
        box=12,
    )
    bar_height = 13
    rows = len(labels) * (len(series) * bar_height + 10)
    legend_rows = layout.rows if legend else 0
    chart = pygal.HorizontalBar(
        **_config(title),
        height=110 + rows + LEGEND_ROW * legend_rows + (20 if x_title else 0),
        show_legend=legend,
        legend_at_bottom=True,
        legend_at_bottom_columns=layout.columns,
        margin_bottom=MARGIN + (layout.extra_bottom if legend else 0),
        x_title=x_title or None,
        range=value_range,
        include_x_axis=True,
        # pygal names the guides before it turns the chart: these are the value lines (vertical)
        show_x_guides=False,
        show_y_guides=True,
        print_values=True,
        print_values_position="top",
        value_formatter=formatter,
        margin_right=margin_right,
    )
    chart.add_xml_filter(values_clear_of_whiskers)
    chart.x_labels = list(reversed(labels))
    for series_name, values in series:
        chart.add(series_name, list(reversed(list(values))))
    return chart


def _value_formatter(digits: int) -> Callable[[float], str]:
    return lambda v: f"{v:.{digits}f}"


def _text(bar: Mapping[str, Any], formatter: Callable[[float], str]) -> str:
    """The text written at a bar: its own (``point(text=...)``) or the chart's formatter's."""
    return str(bar.get("formatter", formatter)(bar["value"]))


def _span(points: Sequence[dict[str, Any]]) -> tuple[float, float] | None:
    """From 0 to the farthest bar end or CI bound on each side, with a little room."""
    ends = [0.0]
    for p in points:
        ends.append(float(p["value"]))
        if "ci" in p:
            ends += [p["ci"]["low"], p["ci"]["high"]]
    low, high = min(ends), max(ends)
    if high == low:
        return None
    pad = 0.04 * (high - low)
    return (low - pad if low < 0 else low, high + pad)


def vertical_bars(
    title: str,
    labels: Sequence[str],
    values: Sequence[dict[str, Any] | None],
    *,
    y_title: str = "",
    value_range: tuple[float, float] | None = None,
) -> pygal.Bar:
    """A vertical bar chart of one series: one bar per label, values written at the bars."""
    chart = pygal.Bar(
        **_config(title),
        height=300,
        show_legend=False,
        y_title=y_title or None,
        range=value_range,
        include_x_axis=True,
        print_values=True,
        print_values_position="top",
        value_formatter=lambda v: f"{v:.2f}",
    )
    chart.x_labels = list(labels)
    chart.add("", list(values))
    return chart


def _config(title: str) -> dict[str, Any]:
    return {
        "style": STYLE,
        "width": WIDTH,
        "title": title,
        "explicit_size": True,
        "js": [],  # no script: the report page loads nothing from the network
        "disable_xml_declaration": True,  # added once by to_svg / stack
        "truncate_label": -1,
        "truncate_legend": -1,
        "margin": MARGIN,
        "spacing": 8,
        "no_data_text": "no data",
    }


def rendered(chart: Any, name: str) -> str:
    """The chart's SVG element: a stable id (pygal draws one at random), no script."""
    chart.uuid = "benchreg-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
    chart.add_xml_filter(_static)
    chart.add_xml_filter(haloed_values)
    return str(chart.render(is_unicode=True))


def _static(root: Any) -> Any:
    """pygal writes its config (every value) into a script for its tooltips, even with no
    tooltip script linked, and the day into a comment: a static figure that the same data
    always draws the same keeps neither."""
    for parent in list(root.iter()):
        for child in list(parent):
            if callable(child.tag) or str(child.tag).rsplit("}", 1)[-1] == "script":
                parent.remove(child)  # a comment's tag is a function (lxml and ElementTree)
    return root


def to_svg(chart: Any, name: str) -> str:
    """One chart as an SVG file's text."""
    return XML_DECLARATION + rendered(chart, name)


def stack(charts: Sequence[tuple[Any, str]]) -> str:
    """Several charts (each with its name) one below the other, as one SVG file's text."""
    parts, y = [], 0
    for chart, name in charts:
        parts.append(rendered(chart, name).replace("<svg", f'<svg y="{y}"', 1))
        y += chart.config.height
    width = max(chart.config.width for chart, _ in charts)
    return (
        XML_DECLARATION
        + f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
        + f'viewBox="0 0 {width} {y}">'
        + "".join(parts)
        + "</svg>"
    )


def primary_metric(rows: Sequence[Mapping[str, Any]], title: str) -> str | None:
    """Rows: {label, model, value, ci95, metric}: one row per task/view, a bar per model with its
    95% CI and its value."""
    rows = [r for r in rows if finite(r.get("value"))]
    if not rows:
        return None
    labels = list(dict.fromkeys(r["label"] for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    unit = all(0 <= r["value"] <= 1 for r in rows)
    cells = {(r["label"], r["model"]): r for r in rows}
    series = []
    for model in models:
        values = []
        for label in labels:
            r = cells.get((label, model))
            if r is None:
                values.append(None)
                continue
            text = f"{r['value']:.3f}" if unit else f"{r['value']:.4g}"
            values.append(point(r["value"], r.get("ci95"), text=text))
        series.append((model, values))
    chart = horizontal_bars(
        f"{title}: {models[0]}" if len(models) == 1 else title,
        labels,
        series,
        x_title="primary metric (95% CI; the value at each bar)",
        value_range=(0.0, 1.0) if unit else None,
    )
    return to_svg(chart, "primary")


def paired_differences(rows: Sequence[Mapping[str, Any]], title: str, xlabel: str) -> str | None:
    """Rows: {label, difference, ci95, significant}: each paired difference as a bar from 0 with
    its 95% CI (red when significant)."""
    rows = [r for r in rows if finite(r.get("difference"))]
    if not rows:
        return None
    values = [
        point(
            r["difference"],
            r.get("ci95"),
            text=f"{r['difference']:+.3f}",
            color=FAIL if r.get("significant") else PALETTE[0],
        )
        for r in rows
    ]
    chart = horizontal_bars(
        title,
        [str(r["label"]) for r in rows],
        [("difference", values)],
        x_title=xlabel,
        legend=False,
    )
    return to_svg(chart, "differences")
