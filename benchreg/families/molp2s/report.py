"""MolP2S's part of a sweep report: accuracy by view per property with the use-claim verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchreg.core import registry
from benchreg.core.reporting import ReportPart, analysis_figure


def molp2s_views(analysis: Mapping[str, Any]) -> str | None:
    """Accuracy by view per property (Wilson 95% CI), one panel per model, with the use-claim
    verdict under each property."""
    from matplotlib.figure import Figure

    from benchreg.core.figures import PALETTE, PASS, error_bar, finite, to_svg

    models = analysis.get("models") or {}
    panels = [(model, tasks) for model, tasks in models.items() if tasks]
    if not panels:
        return None
    order = ("correct", "shuffled", "counterfactual", "structure_only")
    n_props = max(len(tasks) for _, tasks in panels)
    fig = Figure(figsize=(max(7.0, 0.75 * n_props + 2), 3.4 * len(panels)))
    for p, (model, tasks) in enumerate(panels):
        ax = fig.add_subplot(len(panels), 1, p + 1)
        props = sorted(tasks)
        views = [v for v in order if any(v in (tasks[t].get("views") or {}) for t in props)]
        width = 0.8 / max(1, len(views))
        for v, view in enumerate(views):
            xs, ys, errs = [], [], []
            for i, prop in enumerate(props):
                cell = (tasks[prop].get("views") or {}).get(view)
                if not cell or not finite(cell.get("accuracy")):
                    continue
                xs.append(i + (v - (len(views) - 1) / 2) * width)
                ys.append(cell["accuracy"])
                errs.append(error_bar(cell["accuracy"], cell.get("ci95")))
            ax.bar(
                xs,
                ys,
                width,
                yerr=[[e[0] for e in errs], [e[1] for e in errs]],
                capsize=2,
                color=PALETTE[v % len(PALETTE)],
                label=view,
            )
        names = []
        for prop in props:
            verdict = str(tasks[prop].get("use_claim") or "")
            short = (
                "SUPPORTED"
                if verdict.startswith("supported")
                else "not supported"
                if verdict.startswith("not supported")
                else "n/a"
            )
            names.append(f"{prop.split('/')[-1]}\n{short}")
        ax.set_xticks(range(len(props)), names, rotation=60, ha="right", fontsize=7)
        for label, prop in zip(ax.get_xticklabels(), props, strict=True):
            if str(tasks[prop].get("use_claim") or "").startswith("supported"):
                label.set_color(PASS)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy")
        ax.set_title(
            f"MolP2S accuracy by view: {model} (use-claim verdict under each property)", fontsize=9
        )
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return to_svg(fig)


CAPTION = (
    "MolP2S accuracy by view per property (Wilson 95% CI) with "
    "the use-claim verdict (analysis_molp2s_views.json)"
)
figures = analysis_figure(
    "molp2s_views", "molp2s_analysis", molp2s_views, CAPTION
)
registry.report_parts.add("molp2s", ReportPart(figures=figures))
