"""From raw system output to scores: parse, validate, count statuses, score, attach 95% CIs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from benchreg.core.errors import BenchregError, ParseError
from benchreg.core.metric import Metric, MetricValue
from benchreg.core.progress import Progress
from benchreg.core.stats import bootstrap_totals_ci, wilson_ci
from benchreg.core.task import BoundMetric, Task
from benchreg.core.types import Degraded, Prediction, Sample, Status

STATS_CHUNK = 2000  # samples per call of Metric.stats (progress is reported between chunks)


def parse_and_check(task: Task, samples: Sequence[Sample], preds: list[Prediction]) -> None:
    """Turn raw text into answers (task parser) and validate them (answer schema), in place."""
    parser = task.parser
    schema = task.schema
    for sample, pred in zip(samples, preds, strict=True):
        if pred.status is not Status.OK:
            continue
        if pred.answer is None and pred.raw_text is not None:
            if parser is None:
                pred.status, pred.detail = Status.INVALID, "text output but the task has no parser"
                continue
            try:
                parsed = parser(pred.raw_text, sample)
            except ParseError as exc:
                pred.status, pred.detail = Status.INVALID, f"unparseable: {exc}"
                continue
            if isinstance(parsed, Degraded):
                parsed, pred.degraded = parsed.answer, parsed.reason
            pred.answer = parsed
        checked = schema.check(pred.answer, sample)
        pred.answer, pred.status = checked.answer, checked.status
        if checked.detail:
            pred.detail = checked.detail
        if checked.degraded:
            pred.degraded = checked.degraded
        if pred.metadata.get("finish_reason") == "length" and not pred.degraded:
            pred.degraded = "stopped at the token limit (finish_reason: length)"


def resolve(
    task: Task, dataset: Any, samples: Sequence[Sample], preds: list[Prediction]
) -> None:
    """Run the task's resolver (if any) on every scored prediction, in place."""
    if task.resolver is None:
        return
    resolver = task.resolver(dataset)
    for sample, pred in zip(samples, preds, strict=True):
        if pred.status in (Status.OK, Status.OUT_OF_RANGE):
            pred.resolved = resolver(sample, pred)


def status_counts(preds: Sequence[Prediction]) -> dict[str, int]:
    """How many predictions ended in each status (every status listed; they sum to n)."""
    counts = {status.value: 0 for status in Status}
    for pred in preds:
        counts[pred.status.value] += 1
    return counts


def task_counts(
    task: Task, samples: Sequence[Sample], preds: Sequence[Prediction]
) -> dict[str, int]:
    """The family's own counts (never a status name: those mean one thing in every family)."""
    if task.counts is None:
        return {}
    counts = task.counts(samples, preds)
    clash = set(counts) & {s.value for s in Status}
    if clash:
        raise ValueError(
            f"counts function {task.counts.name!r} redefines status counts {sorted(clash)}"
        )
    return counts


@dataclass(slots=True)
class Scores:
    values: dict[str, MetricValue]  # output name -> value with n, denominator, CI
    per_sample: dict[str, np.ndarray]  # output name -> per-sample scores, where they exist
    primary: str


def score(
    task: Task,
    samples: Sequence[Sample],
    preds: Sequence[Prediction],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    progress: bool = True,
) -> Scores:
    """Every metric of the task over the samples, with a 95% CI where asked for."""
    bound = task.metrics
    values: dict[str, MetricValue] = {}
    per_sample: dict[str, np.ndarray] = {}
    primary = ""
    tracker = Progress(f"{task.name}: scoring", len(samples) * len(bound), enabled=progress)
    for item in bound:
        metric = item.metric
        stats = _stats(metric, samples, preds, tracker)
        n = len(samples)
        # through `totals` (unit weights), as the bootstrap does: statistics may be ids
        point = np.atleast_1d(metric.reduce(metric.totals(stats, np.ones((1, n)))[0], n))
        support, denominator = metric.support(stats, preds)
        detail = metric.detail(stats)
        sample_scores = metric.sample_scores(stats)
        cis = _cis(item, stats, sample_scores, n_boot, seed)
        for i, name in enumerate(item.names):
            ci, method = cis[i] if cis else (None, None)
            values[name] = MetricValue(
                float(point[i]), support, denominator, ci, method, dict(detail)
            )
            if sample_scores is not None:
                per_sample[name] = sample_scores[:, i]
        if item.ref.primary:
            primary = item.primary_name
    tracker.finish()
    return Scores(values, per_sample, primary)


def _stats(
    metric: Metric, samples: Sequence[Sample], preds: Sequence[Prediction], tracker: Progress
) -> np.ndarray:
    chunks = []
    for start in range(0, len(samples), STATS_CHUNK):
        end = start + STATS_CHUNK
        chunks.append(np.asarray(metric.stats(samples[start:end], preds[start:end]), float))
        tracker.advance(len(chunks[-1]))
    if not chunks:
        return np.zeros((0, 0))
    return np.concatenate(chunks)


def _cis(
    item: BoundMetric,
    stats: np.ndarray,
    sample_scores: np.ndarray | None,
    n_boot: int,
    seed: int,
) -> list[tuple[tuple[float, float] | None, str | None]] | None:
    """Per output: Wilson for 0/1 per-sample scores, else a percentile bootstrap over the
    per-sample statistics (every metric, unless its entry says `ci: none`)."""
    ref = item.ref
    if ref.ci == "none":
        return None
    n = len(stats)
    out: list[tuple[tuple[float, float] | None, str | None]] = []
    boot: np.ndarray | None = None
    for i in range(len(item.names)):
        column = sample_scores[:, i] if sample_scores is not None else None
        binary = column is not None and bool(np.isin(column, (0.0, 1.0)).all())
        if ref.ci == "wilson" or (ref.ci == "auto" and binary):
            if column is None or not binary:
                raise BenchregError(
                    f"metric {ref.name!r} has no 0/1 per-sample scores for a Wilson CI",
                    fix="use `ci: bootstrap`",
                )
            out.append((wilson_ci(int(column.sum()), n), "wilson"))
            continue
        if n_boot <= 0 or n == 0:
            out.append((None, None))
            continue
        if boot is None:
            boot = bootstrap_totals_ci(
                stats, item.metric.totals, item.metric.reduce, n_boot=n_boot, seed=seed
            )
        out.append((boot[i], f"bootstrap({n_boot})"))
    return out


def strict_view(preds: Sequence[Prediction]) -> list[Prediction] | None:
    """The predictions with every answer read only by a fallback counted as invalid (None when
    no answer was degraded: the strict view is then the lenient one)."""
    if not any(p.degraded and p.status is Status.OK for p in preds):
        return None
    return [
        replace(p, status=Status.INVALID, detail=f"degraded: {p.degraded}")
        if p.degraded and p.status is Status.OK
        else p
        for p in preds
    ]


def sample_rows(
    samples: Sequence[Sample],
    preds: Sequence[Prediction],
    per_sample: dict[str, np.ndarray],
    primary: str,
) -> list[dict[str, Any]]:
    """Rows of samples.jsonl: id, raw output, parsed answer, status, score(s)."""
    rows = []
    for i, (sample, pred) in enumerate(zip(samples, preds, strict=True)):
        scores = {name: float(values[i]) for name, values in per_sample.items()}
        row: dict[str, Any] = {
            "id": sample.id,
            "raw_output": pred.raw_text,
            "answer": pred.answer,
            "gold": sample.gold,
            "status": pred.status.value,
            "score": scores.get(primary),
        }
        if len(scores) > 1:
            row["scores"] = scores
        if pred.detail:
            row["detail"] = pred.detail
        if pred.degraded:
            row["degraded"] = pred.degraded
        if pred.latency_s is not None:
            row["latency_s"] = pred.latency_s
        if pred.metadata:
            row["metadata"] = pred.metadata
        if sample.meta:
            row["meta"] = dict(sample.meta)
        rows.append(row)
    return rows
