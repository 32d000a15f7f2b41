"""Reaction-condition MC's part of a sweep report: reference minus control per question type."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchreg.core import registry
from benchreg.core.reporting import ReportPart, analysis_figure


def reaction_mc_gain(analysis: Mapping[str, Any]) -> str | None:
    """Reference minus control paired mean difference per question type, with its 95% CI."""
    from matplotlib.figure import Figure

    from benchreg.core.figures import PALETTE, error_bar, finite, points_with_ci, to_svg

    systems = {s: v for s, v in (analysis.get("systems") or {}).items() if v}
    if not systems:
        return None
    pairs = sorted({q for per in systems.values() for q in per})
    fig = Figure(figsize=(8, 1.2 + 0.45 * len(pairs) * max(1, len(systems) * 0.6)))
    ax = fig.add_subplot()
    step = 0.6 / max(1, len(systems))
    for s, (system, per) in enumerate(systems.items()):
        qs = [q for q in pairs if finite(per.get(q, {}).get("mean_difference"))]
        ys = [pairs.index(q) + (s - (len(systems) - 1) / 2) * step for q in qs]
        xs = [per[q]["mean_difference"] for q in qs]
        errs = [error_bar(per[q]["mean_difference"], per[q].get("ci95")) for q in qs]
        points_with_ci(ax, xs, ys, errs, PALETTE[s % len(PALETTE)], system)
        for x, y, q in zip(xs, ys, qs, strict=True):
            p = per[q].get("wilcoxon_p")
            if finite(p):
                ax.annotate(
                    f"n={per[q].get('pairs')} p={p:.3g}",
                    (x, y),
                    xytext=(4, 3),
                    textcoords="offset points",
                    fontsize=6,
                )
    ax.axvline(0, color="#444", lw=0.8)
    ax.set_yticks(range(len(pairs)), pairs, fontsize=8)
    ax.set_ylim(len(pairs) - 0.5, -0.5)
    metric = analysis.get("metric", "score")
    ax.set_xlabel(f"{metric}: with reference - without (paired mean, 95% bootstrap CI)")
    ax.set_title("Reaction-condition MC: reference vs control", fontsize=10)
    ax.legend(fontsize=7, loc="best")
    ax.grid(axis="x", alpha=0.3)
    return to_svg(fig)


CAPTION = (
    "Reaction-condition MC: paired difference with reference minus control per question "
    "type (95% bootstrap CI, Wilcoxon p; analysis_reaction_mc_reference_gain.json)"
)
figures = analysis_figure(
    "reaction_mc_reference_gain", "reaction_mc_analysis", reaction_mc_gain, CAPTION
)
registry.report_parts.add("reaction_mc", ReportPart(figures=figures))
