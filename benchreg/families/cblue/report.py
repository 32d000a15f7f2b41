"""PromptCBLUE's part of a sweep report: per-task scores and the overall score."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchreg.core import registry
from benchreg.core.reporting import ReportPart, analysis_figure


def cblue_tasks(analysis: Mapping[str, Any]) -> str | None:
    """Per-task primary score per (model, view) group, and the overall score as the last bar."""
    from matplotlib.figure import Figure

    from benchreg.core.figures import PALETTE, error_bar, finite, to_svg

    groups = [g for g in analysis.get("groups") or [] if g.get("tasks")]
    if not groups:
        return None
    fig = Figure(figsize=(10, 3.6 * len(groups)))
    for k, group in enumerate(groups):
        ax = fig.add_subplot(len(groups), 1, k + 1)
        names = sorted(group["tasks"])
        values = [group["tasks"][t].get("value") for t in names]
        values = [v if finite(v) else 0.0 for v in values]
        errs = [
            error_bar(v, group["tasks"][t].get("ci95"))
            for v, t in zip(values, names, strict=True)
        ]
        ax.bar(
            range(len(names)),
            values,
            0.7,
            yerr=[[e[0] for e in errs], [e[1] for e in errs]],
            capsize=2,
            color=PALETTE[0],
            label="task score (95% CI)",
        )
        overall = group.get("overall")
        labels = [f"{t} ({group['tasks'][t].get('metric', '')})" for t in names]
        if finite(overall):
            ax.bar([len(names)], [overall], 0.7, color=PALETTE[1], label="overall")
            ax.text(len(names), overall + 0.02, f"{overall:.3f}", ha="center", fontsize=7)
            state = "" if group.get("complete", True) else " (incomplete)"
            labels.append(f"OVERALL{state}")
        ax.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("score")
        ax.set_title(f"PromptCBLUE: {group.get('model')} view={group.get('view')}", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return to_svg(fig)


CAPTION = (
    "PromptCBLUE per-task scores (95% CI) and the overall score (analysis_cblue_overall.json)"
)
figures = analysis_figure(
    "cblue_overall", "cblue_analysis", cblue_tasks, CAPTION
)
registry.report_parts.add("cblue", ReportPart(figures=figures))
