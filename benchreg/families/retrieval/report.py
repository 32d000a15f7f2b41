"""Retrieval's part of a sweep report: every gated metric per modality against its gate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchreg.core import registry
from benchreg.core.reporting import Figure as ReportFigure
from benchreg.core.reporting import ReportInput, ReportPart


def figures(data: ReportInput) -> list[ReportFigure]:
    svg = retrieval_gates(data.records) if data.records else None
    caption = "Retrieval: gated metrics per modality (green pass, red fail, dashed line the gate)"
    return [ReportFigure("retrieval_gates", svg, caption)] if svg else []


registry.report_parts.add("retrieval", ReportPart(figures=figures))


def retrieval_gates(jobs: Sequence[Mapping[str, Any]]) -> str | None:
    """Every gated retrieval metric per modality: bars coloured by the gate verdict, the gate as
    a dashed line."""
    from matplotlib.figure import Figure

    from benchreg.core.figures import FAIL, NA, PASS, finite, gate_threshold, to_svg

    gated: dict[str, list[tuple[str, float, str, bool | None]]] = {}
    for job in jobs:
        for name, metric in (job.get("metrics") or {}).items():
            detail = metric.get("detail") or {}
            if "gate" in detail and finite(metric.get("value")):
                label = f"{job['task'].split('/')[-1]}\n{job.get('model', '')}"
                gated.setdefault(name, []).append(
                    (label, metric["value"], str(detail["gate"]), detail.get("pass"))
                )
    if not gated:
        return None
    fig = Figure(figsize=(9, 2.9 * len(gated)))
    for k, (name, bars) in enumerate(gated.items()):
        ax = fig.add_subplot(len(gated), 1, k + 1)
        colors = [{True: PASS, False: FAIL}.get(b[3], NA) for b in bars]
        ax.bar(range(len(bars)), [b[1] for b in bars], 0.6, color=colors)
        for i, b in enumerate(bars):
            ax.text(
                i,
                b[1] + 0.02,
                "pass" if b[3] else "FAIL" if b[3] is False else "n/a",
                ha="center",
                fontsize=7,
            )
            threshold = gate_threshold(b[2])
            if threshold is not None:
                ax.hlines(threshold, i - 0.4, i + 0.4, colors="#222", linestyles="dashed", lw=1)
        ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
        ax.set_ylim(0, 1.12)
        ax.set_title(f"retrieval {name} per modality (gate {bars[0][2]}, dashed)", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return to_svg(fig)
