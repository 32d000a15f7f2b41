"""Cross-run PromptCBLUE analysis `cblue_overall`: the overall score and a results.json to submit.

Jobs are grouped by (model, view), a model being its identity (`metrics.json` `model_id`: two
predictions files both named results.json are two models), shown by its display name with the
short identity added when two models share a name; two jobs of one model, task and view are an
error of the analysis that names both folders. Within a group each of the 16 tasks contributes
its primary metric (rougeL for MedDG and IMCS-V2-MRG, macro-f1 for CHIP-CTC, IMCS-V2-DAC and
KUAKE-QIC, f1 otherwise). Overall = their mean over the 16 tasks (the official evaluate.py
averages 18 tasks, adding Text2DT and CMedCausal, and reports x100). With fewer than 16 tasks the
group's mean is reported as incomplete, never as the overall.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.analysis import (
    AnalysisReport,
    JobRecord,
    markdown_table,
    system_labels,
    unique_jobs,
)
from benchreg.core.io import atomic_write_text, fast_dumps
from benchreg.core.metric import SCORED_AS_GIVEN
from benchreg.families.cblue.catalogue import TASK_NAMES, TaskInfo, lookup

NAME = "cblue_overall"
OVERALL_DEFINITION = (
    "mean over the 16 tasks of each task's primary metric (rougeL: MedDG, IMCS-V2-MRG; macro-f1: "
    "CHIP-CTC, IMCS-V2-DAC, KUAKE-QIC; f1: the others); evaluate.py averages 18 tasks (adds "
    "Text2DT and CMedCausal) and reports x100"
)


@dataclass(frozen=True, slots=True)
class TaskRun:
    info: TaskInfo
    job: JobRecord

    @property
    def primary(self) -> str:
        return str(self.job.metrics["primary"])

    @property
    def value(self) -> float:
        return float(self.job.metrics["metrics"][self.primary]["value"])

    @property
    def summary(self) -> dict[str, Any]:
        """The primary metric's value with its n, denominator and 95% CI."""
        metric = self.job.metrics["metrics"][self.primary]
        return {key: metric.get(key) for key in ("value", "n", "denominator", "ci95")}


def cblue_jobs(jobs: Iterable[JobRecord]) -> list[TaskRun]:
    """The finished PromptCBLUE jobs, each with its task (the entry's loader param `task`)."""
    runs = []
    for job in jobs:
        if job.family != "cblue":
            continue
        params = job.task_spec.get("loader", {}).get("params", {}) or {}
        info = lookup(str(params.get("task", "")))
        if info is not None:
            runs.append(TaskRun(info, job))
    return runs


GroupKey = tuple[str, str | None]  # (model label, view)


def groups(jobs: Iterable[JobRecord]) -> dict[GroupKey, dict[str, TaskRun]]:
    """(model, view) -> {task: run}. Models are told apart by identity (two predictions files
    both called results.json are two models; see core.analysis.system_labels for the label);
    a task run twice by one model and view is an error naming both job folders."""
    runs = cblue_jobs(jobs)
    labels = system_labels(run.job for run in runs)
    by_run = {id(run.job): run for run in runs}
    indexed = unique_jobs(
        (run.job for run in runs),
        NAME,
        key=lambda job: (*job.system_key, by_run[id(job)].info.name, job.view),
    )
    out: dict[GroupKey, dict[str, TaskRun]] = {}
    for (group, root, name, view), job in indexed.items():
        out.setdefault((labels[(group, root)], view), {})[name] = by_run[id(job)]
    return dict(sorted(out.items(), key=lambda item: (item[0][0], item[0][1] or "")))


def overall(jobs: list[JobRecord]) -> dict[str, Any]:
    """Per (model, view): every task's primary value and the mean over the 16 tasks."""
    result = []
    for (model, view), runs in groups(jobs).items():
        values = {name: runs[name].value for name in TASK_NAMES if name in runs}
        missing = [name for name in TASK_NAMES if name not in runs]
        mean = sum(values.values()) / len(values) if values else None
        identities = sorted({run.job.model_id for run in runs.values()})
        result.append(
            {
                "model": model,
                "model_id": identities[0] if len(identities) == 1 else identities,
                "view": view,
                "split": splits_read(runs.values()),
                "tasks": {
                    name: {
                        "metric": runs[name].primary,
                        **runs[name].summary,
                        "metrics": {
                            k: v.get("value") for k, v in runs[name].job.metrics["metrics"].items()
                        },
                        "job": runs[name].job.dir.name,
                        "model_id": runs[name].job.model_id,
                    }
                    for name in values
                },
                "complete": not missing,
                "missing_tasks": missing,
                "overall": mean if not missing else None,
                "n_tasks": len(values),
                "denominator_tasks": len(TASK_NAMES),
                "overall_x100": mean * 100 if mean is not None and not missing else None,
                "mean_of_present": mean,
            }
        )
    return {"groups": result, "definition": OVERALL_DEFINITION}


def splits_read(runs: Iterable[TaskRun]) -> str | list[str]:
    """The split the group's jobs read: the loader's `split` (provenance.json `dataset_info`),
    which is the view unless the loader param `split=` renamed it; a list when they differ."""
    found = sorted(
        {
            str((run.job.provenance.get("dataset_info") or {}).get("split") or run.job.view)
            for run in runs
        }
    )
    return found[0] if len(found) == 1 else found


def results_json(runs: dict[str, TaskRun]) -> dict[str, list[dict[str, Any]]]:
    """The official results.json shape for one group; invalid or missing answers are empty."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name in TASK_NAMES:
        if name not in runs:
            continue
        info = runs[name].info
        out[name] = [
            {
                "sample_id": row["id"],
                "answer": row["answer"]
                if row["status"] in SCORED_AS_GIVEN  # statuses are str enums
                else info.empty_answer(),
            }
            for row in runs[name].job.samples
        ]
    return out


def results_file_names(jobs: list[JobRecord]) -> dict[GroupKey, str]:
    keys = list(groups(jobs))
    if len(keys) == 1:
        return {keys[0]: "results.json"}
    return {key: f"results_{_slug(key[0])}_{_slug(key[1] or 'default')}.json" for key in keys}


def write_results_json(jobs: list[JobRecord], path: Path) -> list[Path]:
    """Write one results.json per (model, view) group; one group goes exactly to ``path``."""
    written = []
    names = results_file_names(jobs)
    for key, runs in groups(jobs).items():
        target = path if len(names) == 1 else path.with_name(names[key])
        atomic_write_text(target, _dump(results_json(runs)))
        written.append(target)
    return written


def _dump(data: Any) -> str:
    """results.json as `json.dumps(indent=2, ensure_ascii=False)` writes it, by orjson."""
    return fast_dumps(data)


def _slug(text: str) -> str:
    slug = "".join(c if c.isalnum() or c in "-._" else "-" for c in text)
    return re.sub(r"-{2,}", "-", slug).strip("-")


@registry.analyses.register("cblue_overall")
def cblue_overall(jobs: list[JobRecord], **params: Any) -> AnalysisReport:
    """Overall PromptCBLUE score per (model, view), plus results.json file(s) to submit."""
    data = overall(jobs)
    names = results_file_names(jobs)
    files = {names[key]: _dump(results_json(runs)) for key, runs in groups(jobs).items()}
    data["results_files"] = sorted(files)
    return AnalysisReport(NAME, _markdown(data, names), data, files)


def incomplete_label(present: int, total: int) -> str:
    """What a group with tasks missing shows instead of the overall: `mean of 3 of the 16
    tasks: not the overall`; one task is no mean."""
    if present == 1:
        return f"1 of the {total} tasks: no overall"
    return f"mean of {present} of the {total} tasks: not the overall"


def split_label(group: dict[str, Any]) -> str:
    """`view dev`, or, when the loader param `split=` named another file, the split read:
    `split renamed.json, read for view dev`."""
    view, split = group.get("view"), group.get("split")
    if split is None or split == view:
        return f"view {view}"
    shown = ", ".join(f"{s}.json" for s in split) if isinstance(split, list) else f"{split}.json"
    return f"split {shown}, read for view {view}"


def _markdown(data: dict[str, Any], names: dict[GroupKey, str]) -> str:
    lines = ["PromptCBLUE: primary metric per task and their mean (0-1 scale).", ""]
    for group in data["groups"]:
        model, view = group["model"], group["view"]
        rows: list[list[Any]] = []
        for name, task in group["tasks"].items():
            ci = task.get("ci95")
            rows.append(
                [
                    name,
                    task["metric"],
                    f"{task['value']:.6f}",
                    f"{task.get('n')}/{task.get('denominator')}",
                    f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else None,
                ]
            )
        if group["complete"]:
            rows.append(
                [
                    "**overall (mean of 16)**",
                    None,
                    f"**{group['overall']:.6f}**",
                    "16/16 tasks",
                    None,
                ]
            )
        else:
            mean = group["mean_of_present"]
            label = incomplete_label(len(group["tasks"]), 16)
            rows.append([label, None, f"{mean:.6f}" if mean is not None else "n/a", None, None])
        header = ["task", "metric", "value", "n/denominator", "95% CI"]
        ids = group["model_id"] if isinstance(group["model_id"], list) else [group["model_id"]]
        lines += [
            f"### {model} ({split_label(group)})",
            "",
            "model identity: " + ", ".join(f"`{i}`" for i in ids),
            "",
            markdown_table(header, rows),
        ]
        if not group["complete"]:
            lines += ["", f"Missing tasks: {', '.join(group['missing_tasks'])}."]
            lines += [
                "",
                f"Structured answers of the {len(group['tasks'])} tasks present: "
                f"`{names[(model, view)]}` (incomplete: not a full submission).",
                "",
            ]
        else:
            lines += ["", f"Structured answers to submit: `{names[(model, view)]}`.", ""]
    return "\n".join(lines)
