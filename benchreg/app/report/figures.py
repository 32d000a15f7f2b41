"""The report's figures, drawn with matplotlib's object API (Agg/SVG canvases, no pyplot, no
display). Each function returns SVG text, or None when there is nothing to draw."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib import rcParams
from matplotlib.figure import Figure

rcParams["svg.hashsalt"] = "benchreg"  # stable element ids: the same data gives the same file
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
PASS, FAIL, NA = "#2ca02c", "#d62728", "#9e9e9e"


def to_svg(fig: Figure) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()


def _finite(x: Any) -> bool:
    return isinstance(x, int | float) and math.isfinite(x)


def _points_with_ci(
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


def _err(value: float, ci: Sequence[float] | None) -> tuple[float, float]:
    if not ci or not all(_finite(c) for c in ci):
        return (0.0, 0.0)
    return (max(0.0, value - ci[0]), max(0.0, ci[1] - value))


def primary_metric(rows: Sequence[Mapping[str, Any]], title: str) -> str | None:
    """Rows: {label, model, value, ci95, metric}: one line per task/view, a dot per model with
    its 95% CI."""
    rows = [r for r in rows if _finite(r.get("value"))]
    if not rows:
        return None
    labels = list(dict.fromkeys(r["label"] for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig = Figure(figsize=(8.5, 0.9 + 0.32 * len(labels) * max(1, min(len(models), 3) * 0.6)))
    ax = fig.add_subplot()
    step = 0.6 / max(1, len(models))
    for m, model in enumerate(models):
        mine = [r for r in rows if r["model"] == model]
        ys = [labels.index(r["label"]) + (m - (len(models) - 1) / 2) * step for r in mine]
        xs = [r["value"] for r in mine]
        errs = [_err(r["value"], r.get("ci95")) for r in mine]
        _points_with_ci(ax, xs, ys, errs, PALETTE[m % len(PALETTE)], model)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    if all(0 <= r["value"] <= 1 for r in rows):
        ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("primary metric (95% CI)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title, fontsize=10)
    ax.legend(
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.08 - 0.6 / len(labels)),
        ncol=min(3, len(models)),
        frameon=False,
    )
    return to_svg(fig)


def molp2s_views(analysis: Mapping[str, Any]) -> str | None:
    """Accuracy by view per property (Wilson 95% CI), one panel per model, with the use-claim
    verdict under each property."""
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
                if not cell or not _finite(cell.get("accuracy")):
                    continue
                xs.append(i + (v - (len(views) - 1) / 2) * width)
                ys.append(cell["accuracy"])
                errs.append(_err(cell["accuracy"], cell.get("ci95")))
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


def cblue_tasks(analysis: Mapping[str, Any]) -> str | None:
    """Per-task primary score per (model, view) group, and the overall score as the last bar."""
    groups = [g for g in analysis.get("groups") or [] if g.get("tasks")]
    if not groups:
        return None
    fig = Figure(figsize=(10, 3.6 * len(groups)))
    for k, group in enumerate(groups):
        ax = fig.add_subplot(len(groups), 1, k + 1)
        names = sorted(group["tasks"])
        values = [group["tasks"][t].get("value") for t in names]
        values = [v if _finite(v) else 0.0 for v in values]
        errs = [_err(v, group["tasks"][t].get("ci95")) for v, t in zip(values, names, strict=True)]
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
        if _finite(overall):
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


def reaction_mc_gain(analysis: Mapping[str, Any]) -> str | None:
    """Reference minus control paired mean difference per question type, with its 95% CI."""
    systems = {s: v for s, v in (analysis.get("systems") or {}).items() if v}
    if not systems:
        return None
    pairs = sorted({q for per in systems.values() for q in per})
    fig = Figure(figsize=(8, 1.2 + 0.45 * len(pairs) * max(1, len(systems) * 0.6)))
    ax = fig.add_subplot()
    step = 0.6 / max(1, len(systems))
    for s, (system, per) in enumerate(systems.items()):
        qs = [q for q in pairs if _finite(per.get(q, {}).get("mean_difference"))]
        ys = [pairs.index(q) + (s - (len(systems) - 1) / 2) * step for q in qs]
        xs = [per[q]["mean_difference"] for q in qs]
        errs = [_err(per[q]["mean_difference"], per[q].get("ci95")) for q in qs]
        _points_with_ci(ax, xs, ys, errs, PALETTE[s % len(PALETTE)], system)
        for x, y, q in zip(xs, ys, qs, strict=True):
            p = per[q].get("wilcoxon_p")
            if _finite(p):
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


def retrieval_gates(jobs: Sequence[Mapping[str, Any]]) -> str | None:
    """Every gated retrieval metric per modality: bars coloured by the gate verdict, the gate as
    a dashed line."""
    gated: dict[str, list[tuple[str, float, str, bool | None]]] = {}
    for job in jobs:
        for name, metric in (job.get("metrics") or {}).items():
            detail = metric.get("detail") or {}
            if "gate" in detail and _finite(metric.get("value")):
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
            threshold = _threshold(b[2])
            if threshold is not None:
                ax.hlines(threshold, i - 0.4, i + 0.4, colors="#222", linestyles="dashed", lw=1)
        ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
        ax.set_ylim(0, 1.12)
        ax.set_title(f"retrieval {name} per modality (gate {bars[0][2]}, dashed)", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return to_svg(fig)


def _threshold(gate: str) -> float | None:
    try:
        return float(gate.split()[-1])
    except (ValueError, IndexError):
        return None


def paired_differences(rows: Sequence[Mapping[str, Any]], title: str, xlabel: str) -> str | None:
    """Rows: {label, difference, ci95, significant}: a forest plot of paired differences."""
    rows = [r for r in rows if _finite(r.get("difference"))]
    if not rows:
        return None
    fig = Figure(figsize=(8, 1.2 + 0.32 * len(rows)))
    ax = fig.add_subplot()
    for i, r in enumerate(rows):
        color = FAIL if r.get("significant") else PALETTE[0]
        err = _err(r["difference"], r.get("ci95"))
        ax.errorbar(
            [r["difference"]],
            [i],
            xerr=[[err[0]], [err[1]]],
            fmt="o",
            ms=4,
            capsize=2.5,
            color=color,
        )
    ax.axvline(0, color="#444", lw=0.8)
    ax.set_yticks(range(len(rows)), [r["label"] for r in rows], fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return to_svg(fig)
