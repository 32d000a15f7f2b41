"""`retrieval_modalities`: one table of every metric per modality (and view, model) of a sweep,
with its gate, n and denominator; the sha256 of the corpus manifest and of every set file each
run read; and a per-holder and per-as_of (date) breakdown recomputed from each sample's
resolution (samples.jsonl `metadata.resolution`) with the same per-query functions the metrics
use. A query without a resolution (missing, invalid) scores the worst value, as in the metrics.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any

from benchreg.core import registry
from benchreg.core.analysis import AnalysisReport, JobRecord, markdown_table, system_labels
from benchreg.core.ranking.base import DEMONSTRATION
from benchreg.core.ranking.clean_at_k import is_clean
from benchreg.core.ranking.false_recall import is_false_recall
from benchreg.core.ranking.mrr import reciprocal_rank
from benchreg.core.ranking.ndcg_at_k import ndcg_at
from benchreg.core.ranking.recall_at_k import recall_at
from benchreg.core.ranking.resolution import ResolvedRanking
from benchreg.core.summary import gate_verdict
from benchreg.families.retrieval.resolver import FOREIGN, FUTURE

Row = dict[str, Any]


def _cell(metric: dict[str, Any]) -> str:
    detail = metric.get("detail") or {}
    value = metric.get("value")
    shown = "null" if value is None else f"{value:.4f}"
    text = f"{shown} ({metric['n']}/{metric['denominator']})"
    ci = metric.get("ci95")
    if ci and None not in ci:
        text += f" [{ci[0]:.4f}, {ci[1]:.4f}]"
    if "gate" in detail:
        text += f" {gate_verdict(detail)} {detail['gate']}"
        if detail.get("data"):
            text += f" ({detail['data']})"
    return text


def _demonstration(jobs: Sequence[JobRecord]) -> list[str]:
    """The runs on demonstration data (gold written by this project)."""
    return sorted({
        f"{job.task} ({job.view})" for job in jobs
        if any((m.get("detail") or {}).get("data") for m in job.metrics["metrics"].values())
    })


def _param(job: JobRecord, metric: str, key: str, default: Any) -> Any:
    for ref in job.task_spec.get("metrics", []):
        if ref.get("name") == metric:
            return (ref.get("params") or {}).get(key, default)
    return default


def _resolution(row: Row) -> ResolvedRanking | None:
    data = (row.get("metadata") or {}).get("resolution")
    return ResolvedRanking.from_json(data) if data else None


def _cutoff(job: JobRecord) -> int:
    """The task's cut-off k (`recall_at_k`'s), which per_query uses for recall and nDCG."""
    return int(_param(job, "recall_at_k", "k", 10))


def per_query(job: JobRecord) -> list[tuple[Row, dict[str, float]]]:
    """Each sample row with its per-query values (absent keys: the metric does not apply)."""
    k = _cutoff(job)
    strong = _param(job, "false_recall", "strong_score", None)
    out = []
    for row in job.samples:
        res, meta = _resolution(row), row.get("meta") or {}
        values: dict[str, float] = {}
        if row.get("gold"):
            values[f"recall@{k}"] = recall_at(res, k) if res else 0.0
            values["mrr"] = reciprocal_rank(res) if res else 0.0
            values[f"ndcg@{k}"] = ndcg_at(res, k) if res else 0.0
        else:
            values["false_recall"] = float(is_false_recall(res, strong)) if res else 1.0
        if meta.get("as_of") is not None:
            values["temporal_correctness"] = float(bool(res) and is_clean(res, FUTURE, k))
        if meta.get("holder") is not None:
            values["holder_correctness"] = float(bool(res) and is_clean(res, FOREIGN, k))
        out.append((row, values))
    return out


def _model(job: JobRecord, labels: dict[tuple[str, str], str] | None) -> str:
    """The model's display name, with its short identity when another model shares the name."""
    return labels.get(job.system_key, job.model) if labels else job.model


def breakdown(
    jobs: Sequence[JobRecord],
    key: Callable[[Row], str],
    label: str,
    labels: dict[tuple[str, str], str] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    cutoffs = sorted({_cutoff(job) for job in jobs})  # the names per_query gives the jobs
    names = [
        *(f"recall@{k}" for k in cutoffs),
        "mrr",
        *(f"ndcg@{k}" for k in cutoffs),
        "false_recall",
        "temporal_correctness",
        "holder_correctness",
    ]
    rows, data = [], []
    for job in jobs:
        groups: dict[str, list[dict[str, float]]] = defaultdict(list)
        for row, values in per_query(job):
            groups[key(row)].append(values)
        for group, items in sorted(groups.items()):
            cells = {}
            for name in names:
                vals = [v[name] for v in items if name in v]
                cells[name] = (fmean(vals), len(vals)) if vals else None
            rows.append([job.task, job.view, _model(job, labels), group, len(items)] + [
                f"{c[0]:.4f} (n={c[1]})" if c else "" for c in cells.values()
            ])
            data.append({"task": job.task, "view": job.view, "model": _model(job, labels),
                         "model_id": job.model_id,
                         label: group, "entries": len(items),
                         **{n: (list(c) if c else None) for n, c in cells.items()}})
    header = ["task", "view", "model", label, "entries", *names]
    return markdown_table(header, rows), data


def _holder(row: Row) -> str:
    return str((row.get("meta") or {}).get("holder") or "(none)")


def _as_of_date(row: Row) -> str:
    value = (row.get("meta") or {}).get("as_of")
    return str(value)[:10] if value else "(none)"


@registry.analyses.register("retrieval_modalities")
def retrieval_modalities(jobs: list[JobRecord]) -> AnalysisReport:
    labels = system_labels(jobs)
    jobs = sorted(jobs, key=lambda j: (j.task, j.view or "", _model(j, labels)))
    names: list[str] = []
    for job in jobs:
        names += [n for n in job.metrics["metrics"] if n not in names]
    rows = [
        [job.task, job.view, _model(job, labels)]
        + [_cell(job.metrics["metrics"][n]) if n in job.metrics["metrics"] else "" for n in names]
        for job in jobs
    ]
    hashes = [
        [job.task, job.view, path, sha]
        for job in jobs
        for path, sha in sorted(job.provenance.get("data_files_sha256", {}).items())
    ]
    holder_md, holder_data = breakdown(jobs, _holder, "holder", labels)
    as_of_md, as_of_data = breakdown(jobs, _as_of_date, "as_of", labels)
    demo = _demonstration(jobs)
    warning = ([f"**{DEMONSTRATION}**: the gold of {', '.join(demo)} was written by this "
                "project (a synthetic annotation); their gate verdicts are no result."]
               if demo else [])
    markdown = "\n\n".join([
        "# Retrieval: every metric per modality",
        *warning,
        "Each cell: value (n/denominator) [95% CI] and the gate verdict from the task entry. "
        "n = entries with a scored answer, denominator = entries the metric applies to "
        "(answerable for recall/MRR/nDCG, unanswerable for false recall, with as_of / "
        "scope.holder for the correctness metrics); an unscored entry counts as the worst value; "
        "a metric over no entry is null.",
        markdown_table(["task", "view", "model", *names], rows),
        "## sha256 of the corpus manifest and set files",
        markdown_table(["task", "view", "file", "sha256"], hashes),
        "## Per holder",
        holder_md,
        "## Per as_of date",
        as_of_md,
    ]) + "\n"
    data = {
        "demonstration": demo,
        "runs": [
            {"task": j.task, "view": j.view, "model": _model(j, labels),
             "model_id": j.model_id, "metrics": j.metrics["metrics"],
             "counts": j.metrics.get("counts", {}),
             "sha256": j.provenance.get("data_files_sha256", {})}
            for j in jobs
        ],
        "per_holder": holder_data,
        "per_as_of": as_of_data,
    }
    return AnalysisReport("retrieval_modalities", markdown, data)
