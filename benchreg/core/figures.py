"""Drawing helpers for report figures, matplotlib's object API (Agg/SVG canvases, no pyplot,
no display). Each figure function returns SVG text, or None when there is nothing to draw.

Import this module only where a figure is drawn: matplotlib is an optional extra
(`benchreg[reports]`); without it the import raises ImportError, which the report turns into a
note saying how to install it.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib import rcParams
from matplotlib.figure import Figure

rcParams["svg.hashsalt"] = "benchreg"  # stable element ids: the same data gives the same file
# text as SVG text (searchable, half the bytes, and no glyph outlines to compute): the viewer's
# sans-serif font draws it
rcParams["svg.fonttype"] = "none"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
PASS, FAIL, NA = "#2ca02c", "#d62728", "#9e9e9e"


def to_svg(fig: Figure) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()


def finite(x: Any) -> bool:
    return isinstance(x, int | float) and math.isfinite(x)


def points_with_ci(
    ax: Any,
    xs: list[float],
    ys: list[float],
    errs: list[tuple[float, float]],
    color: str,
    label: str,
) -> None:
    """One series of points with horizontal 95% CI bars."""
    ax.errorbar(
        xs,
        ys,
        xerr=[[e[0] for e in errs], [e[1] for e in errs]],
        fmt="o",
        ms=4,
        capsize=2.5,
        color=color,
        label=label,
    )


def value_labels(
    ax: Any,
    bars: Any,
    values: Sequence[float],
    above: Sequence[float] | None = None,
    *,
    horizontal: bool = False,
    digits: int = 2,
    fontsize: float = 6.5,
) -> None:
    """Each bar's value written at its end, past its error bar (``above``: the upper error)."""
    above = above or [0.0] * len(values)
    for patch, value, err in zip(bars, values, above, strict=True):
        text = f"{value:.{digits}f}"
        if horizontal:
            y = patch.get_y() + patch.get_height() / 2
            ax.annotate(
                text,
                (value + err, y),
                xytext=(2, 0),
                textcoords="offset points",
                ha="left",
                va="center",
                fontsize=fontsize,
            )
        else:
            x = patch.get_x() + patch.get_width() / 2
            ax.annotate(
                text,
                (x, value + err),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=fontsize,
            )


def legend_outside(ax: Any, fontsize: float = 7, title: str | None = None) -> None:
    """The legend right of the axes, outside them: it never covers a bar or a point (the SVG's
    tight bounding box makes room for it)."""
    ax.legend(
        fontsize=fontsize,
        title=title,
        title_fontsize=fontsize,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        borderaxespad=0.0,
        frameon=False,
    )


def error_bar(value: float, ci: Sequence[float] | None) -> tuple[float, float]:
    if not ci or not all(finite(c) for c in ci):
        return (0.0, 0.0)
    return (max(0.0, value - ci[0]), max(0.0, ci[1] - value))


def primary_metric(rows: Sequence[Mapping[str, Any]], title: str) -> str | None:
    """Rows: {label, model, value, ci95, metric}: one line per task/view, a dot per model with
    its 95% CI."""
    rows = [r for r in rows if finite(r.get("value"))]
    if not rows:
        return None
    labels = list(dict.fromkeys(r["label"] for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    per_label = 0.1 + 0.14 * min(len(models), 4)  # room for each model's point and its value
    fig = Figure(figsize=(8.5, 0.9 + per_label * len(labels)))
    ax = fig.add_subplot()
    step = 0.7 / max(1, len(models))
    unit = all(0 <= r["value"] <= 1 for r in rows)
    for m, model in enumerate(models):
        mine = [r for r in rows if r["model"] == model]
        ys = [labels.index(r["label"]) + (m - (len(models) - 1) / 2) * step for r in mine]
        xs = [r["value"] for r in mine]
        errs = [error_bar(r["value"], r.get("ci95")) for r in mine]
        points_with_ci(ax, xs, ys, errs, PALETTE[m % len(PALETTE)], model)
        for x, y, err in zip(xs, ys, errs, strict=True):
            ax.annotate(
                f"{x:.3f}" if unit else f"{x:.4g}",
                (x + err[1], y),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=6.5,
            )
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    if unit:
        ax.set_xlim(-0.02, 1.12)
    ax.set_xlabel("primary metric (95% CI; the value beside each point)")
    ax.grid(axis="x", alpha=0.3)
    if len(models) == 1:
        ax.set_title(f"{title}: {models[0]}", fontsize=10)
    else:
        ax.set_title(title, fontsize=10)
        legend_outside(ax, fontsize=8, title="model")
    return to_svg(fig)


def gate_threshold(gate: str) -> float | None:
    try:
        return float(gate.split()[-1])
    except (ValueError, IndexError):
        return None


def paired_differences(rows: Sequence[Mapping[str, Any]], title: str, xlabel: str) -> str | None:
    """Rows: {label, difference, ci95, significant}: a forest plot of paired differences."""
    rows = [r for r in rows if finite(r.get("difference"))]
    if not rows:
        return None
    fig = Figure(figsize=(8, 1.2 + 0.34 * len(rows)))
    ax = fig.add_subplot()
    for i, r in enumerate(rows):
        color = FAIL if r.get("significant") else PALETTE[0]
        err = error_bar(r["difference"], r.get("ci95"))
        ax.errorbar(
            [r["difference"]],
            [i],
            xerr=[[err[0]], [err[1]]],
            fmt="o",
            ms=4,
            capsize=2.5,
            color=color,
        )
        ax.annotate(
            f"{r['difference']:+.3f}",
            (r["difference"] + err[1], i),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=7,
        )
    ax.axvline(0, color="#444", lw=0.8)
    ax.set_yticks(range(len(rows)), [r["label"] for r in rows], fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return to_svg(fig)
