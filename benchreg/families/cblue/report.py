"""PromptCBLUE's part of a sweep report: the overall score with its 95% CI and each task's primary
metric (the headline), and the per-task scores as a figure, from `analysis_cblue_overall.json`
(``families/cblue/analysis.py``) and the jobs' metrics.json records."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from benchreg.core import registry
from benchreg.core.reporting import Cell, Headline, ReportInput, ReportPart, analysis_figure
from benchreg.core.summary import ND_NOTE, support
from benchreg.families.cblue.analysis import incomplete_label, split_label

ANALYSIS = "cblue_overall"
Z95 = 1.959964


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def _ci(ci: Any) -> tuple[float, float] | None:
    if isinstance(ci, Sequence) and len(ci) == 2 and all(_number(c) is not None for c in ci):
        return float(ci[0]), float(ci[1])
    return None


def overall_ci(tasks: Mapping[str, Mapping[str, Any]]) -> tuple[float, float] | None:
    """A 95% CI of the mean of the task scores: the tasks are independent samples, so the mean's
    standard error is sqrt(sum of SE_i^2) / k, each task's SE_i read from its own 95% CI as
    (hi - lo) / (2 x 1.96) (a normal approximation). None when a task has no CI."""
    values, errors = [], []
    for task in tasks.values():
        value, ci = _number(task.get("value")), _ci(task.get("ci95"))
        if value is None or ci is None:
            return None
        values.append(value)
        errors.append((ci[1] - ci[0]) / (2 * Z95))
    if not values:
        return None
    mean = sum(values) / len(values)
    half = Z95 * math.sqrt(sum(e * e for e in errors)) / len(values)
    return max(0.0, mean - half), min(1.0, mean + half)


def _value_ci(value: Any, ci: tuple[float, float] | None) -> str:
    number = _number(value)
    if number is None:
        return "n/a"
    return f"{number:.4f} [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else f"{number:.4f}"


def _records_by_job(data: ReportInput) -> dict[str, Mapping[str, Any]]:
    return {str(r.get("job")): r for r in data.records if r.get("job")}


def headline(data: ReportInput) -> Headline | None:
    """Per (model, view): the overall score (mean of the 16 tasks' primary metrics) with its
    95% CI first, then every task's primary metric with its CI and n/denominator."""
    analysis = data.analysis(ANALYSIS)
    groups = [g for g in (analysis or {}).get("groups") or [] if g.get("tasks")]
    if not groups:
        return None
    several = len(groups) > 1
    records = _records_by_job(data)
    columns = [
        *(["model", "view"] if several else []),
        "task",
        "metric",
        "value [95% CI]",
        "n/denominator",
        "not ok",
    ]
    rows: list[list[Any]] = []
    for group in groups:
        lead = [group.get("model"), _view_cell(group)] if several else []
        tasks = group["tasks"]
        rows.append([*lead, *_overall_row(group)])
        rows += [[*lead, *_task_row(name, tasks[name], records)] for name in sorted(tasks)]
    title = "PromptCBLUE: the overall score and each task's primary metric"
    if not several:
        title += f" ({groups[0].get('model')}, {split_label(groups[0])})"
    footnotes = [
        f"Overall: {(analysis or {}).get('definition') or 'the mean of the tasks primary metrics'}"
        ". With tasks missing, the mean of those present is shown, never as the overall.",
        "Overall 95% CI: normal approximation from the tasks' own 95% CIs (tasks independent; "
        "each task's standard error read as CI width / 3.92).",
        ND_NOTE,
    ]
    missing = sorted({t for g in groups for t in g.get("missing_tasks") or []})
    if missing:
        footnotes.append(f"Tasks missing from the sweep: {', '.join(missing)}.")
    return Headline(title, columns, rows, footnotes)


def _view_cell(group: Mapping[str, Any]) -> str:
    """The view, and the split read when the loader param `split=` named another file."""
    label = split_label(group)
    return label.removeprefix("view ") if label.startswith("view ") else label


def _overall_row(group: Mapping[str, Any]) -> list[Any]:
    """The group's first row: the overall score, or, with tasks missing, the mean of those
    run (one task: no mean), said not to be the overall."""
    tasks = group["tasks"]
    total = group.get("denominator_tasks", 16)
    ci = overall_ci(tasks)
    if group.get("complete"):
        label = Cell(f"OVERALL (mean of {total} tasks)", "pass")
        value = _value_ci(group.get("overall"), ci)
    else:
        label = Cell(incomplete_label(len(tasks), total), "fail")
        value = _value_ci(group.get("mean_of_present"), ci) if len(tasks) > 1 else ""
    return [label, "", value, f"{len(tasks)}/{total} tasks", ""]


def _task_row(name: str, task: Mapping[str, Any], records: Mapping[str, Any]) -> list[Any]:
    """A task's row of the headline: its primary metric, CI, n/denominator and samples not ok
    (from its job's record when the report has it)."""
    record = records.get(str(task.get("job")))
    if record is not None:
        metric = (record.get("metrics") or {}).get(task.get("metric")) or task
        sup = support(record, metric)
        nd, gap = sup.text, sup.not_ok_text
    else:
        nd, gap = f"{task.get('n')}/{task.get('denominator')}", ""
    value = _value_ci(task.get("value"), _ci(task.get("ci95")))
    return [name, task.get("metric") or "", value, nd, gap]


def cblue_tasks(analysis: Mapping[str, Any]) -> str | None:
    """Per-task primary score per (model, view) group, the overall score first (orange): a panel
    of horizontal bars per group with the value at each bar, the task names readable on the
    left."""
    from benchreg.core.figures import PALETTE, finite, horizontal_bars, point, stack

    groups = [g for g in analysis.get("groups") or [] if g.get("tasks")]
    if not groups:
        return None
    charts = []
    for k, group in enumerate(groups):
        names = sorted(group["tasks"])
        labels = [f"{t} ({group['tasks'][t].get('metric', '')})" for t in names]
        values = [group["tasks"][t].get("value") for t in names]
        cis = [group["tasks"][t].get("ci95") for t in names]
        colors = [PALETTE[0]] * len(names)
        if group.get("complete") or len(names) > 1:  # one task is no mean: no bar for it
            complete = bool(group.get("complete"))
            labels.insert(0, "OVERALL" if complete else f"mean of {len(names)} tasks (not overall)")
            values.insert(0, group.get("overall" if complete else "mean_of_present"))
            cis.insert(0, overall_ci(group["tasks"]))
            colors.insert(0, PALETTE[1])
        bars = [
            point(v, c, color=color) if finite(v) else None
            for v, c, color in zip(values, cis, colors, strict=True)
        ]
        title = f"PromptCBLUE: {group.get('model')}, {split_label(group)}"
        chart = horizontal_bars(
            title,
            labels,
            [("score", bars)],
            x_title="score (95% CI; the value at each bar)",
            value_range=(0.0, 1.0),
            legend=False,
        )
        charts.append((chart, f"cblue-{k}"))
    return stack(charts)


CAPTION = (
    "PromptCBLUE overall score (first bar, orange; 95% CI from the tasks' CIs) and per-task "
    "scores (95% CI) with the value at each bar (analysis_cblue_overall.json)"
)
figures = analysis_figure(ANALYSIS, "cblue_analysis", cblue_tasks, CAPTION)
registry.report_parts.add("cblue", ReportPart(figures=figures, headline=headline))
