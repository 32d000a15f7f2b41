"""From raw system output to scores: parse, validate, score, count, and attach CIs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.spec import MetricRef, TaskSpec
from benchreg.core.stats import bootstrap_mean_ci, bootstrap_statistic_ci, wilson_ci
from benchreg.core.types import MetricResult, Prediction, PredictionSet, Sample, Status


@dataclass(slots=True)
class MetricSummary:
    value: float
    n: int
    denominator: int
    ci95: tuple[float, float] | None = None
    ci_method: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "n": self.n, "denominator": self.denominator}
        if self.ci95 is not None:
            out["ci95"] = list(self.ci95)
            out["ci_method"] = self.ci_method
        if self.detail:
            out["detail"] = self.detail
        return out


def align_predictions(samples: Sequence[Sample], by_id: dict[str, Prediction]) -> list[Prediction]:
    """One prediction per sample, in sample order; absent ones are MISSING."""
    return [
        by_id.get(s.id) or Prediction(sample_id=s.id, status=Status.MISSING, detail="no prediction")
        for s in samples
    ]


def parse_and_check(spec: TaskSpec, samples: Sequence[Sample], preds: list[Prediction]) -> None:
    """Turn raw text into answers (task parser) and validate them (answer schema), in place."""
    parser = registry.parsers.get(spec.parser.name) if spec.parser else None
    parser_params = spec.parser.params if spec.parser else {}
    schema = registry.answer_schemas.get(spec.answer_schema.name)
    for sample, pred in zip(samples, preds, strict=True):
        if pred.status is not Status.OK:
            continue
        if pred.answer is None and pred.raw_text is not None:
            if parser is None:
                pred.status, pred.detail = Status.INVALID, "text output but the task has no parser"
                continue
            try:
                pred.answer = parser(pred.raw_text, sample, **parser_params)
            except ParseError as exc:
                pred.status, pred.detail = Status.INVALID, f"unparseable: {exc}"
                continue
        checked = schema.check(pred.answer, sample)
        pred.answer, pred.status = checked.answer, checked.status
        if checked.detail:
            pred.detail = checked.detail


def count_statuses(preds: Sequence[Prediction]) -> dict[str, int]:
    counts = {status.value: 0 for status in Status}
    for pred in preds:
        counts[pred.status.value] += 1
    return counts


def compute_counts(
    spec: TaskSpec,
    samples: Sequence[Sample],
    preds: Sequence[Prediction],
    prediction_set: PredictionSet | None,
) -> dict[str, int]:
    if spec.counts is None:
        counts = count_statuses(preds)
        if prediction_set is not None:
            counts["unknown_ids"] = len(prediction_set.unknown_ids)
        return counts
    counter = registry.counters.get(spec.counts.name)
    return counter(samples, preds, prediction_set, **spec.counts.params)


def compute_metrics(
    spec: TaskSpec,
    samples: Sequence[Sample],
    preds: Sequence[Prediction],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> tuple[dict[str, MetricSummary], dict[str, list[float]]]:
    """All metrics of the task; returns summaries and the per-sample scores that exist."""
    summaries: dict[str, MetricSummary] = {}
    per_sample: dict[str, list[float]] = {}
    for ref in spec.metrics:
        fn = registry.metrics.get(ref.name)
        result: MetricResult = fn(samples, preds, **ref.params)
        summary = MetricSummary(result.value, result.n, result.denominator, detail=result.detail)
        want_ci = ref.primary or ref.ci in ("wilson", "bootstrap")
        if want_ci and ref.ci != "none":
            ci = _ci(ref, fn, samples, preds, result, n_boot, seed)
            if ci is not None:
                summary.ci95, summary.ci_method = ci
        summaries[ref.output_name] = summary
        if result.per_sample is not None:
            per_sample[ref.output_name] = result.per_sample
    return summaries, per_sample


def _ci(
    ref: MetricRef,
    fn: Any,
    samples: Sequence[Sample],
    preds: Sequence[Prediction],
    result: MetricResult,
    n_boot: int,
    seed: int,
) -> tuple[tuple[float, float], str] | None:
    """Wilson for 0/1 scores, else percentile bootstrap; None when bootstrapping is off."""
    values = result.per_sample
    binary = values is not None and all(v in (0.0, 1.0) for v in values)
    if ref.ci == "wilson" or (ref.ci == "auto" and binary):
        if values is None:
            raise ValueError(f"metric {ref.name}: a Wilson CI needs per-sample scores")
        return wilson_ci(int(sum(values)), len(values)), "wilson"
    if n_boot <= 0:
        return None
    if values is not None:
        return bootstrap_mean_ci(values, n_boot=n_boot, seed=seed), f"bootstrap({n_boot})"

    def statistic(idx: Any) -> float:
        return fn([samples[i] for i in idx], [preds[i] for i in idx], **ref.params).value

    return bootstrap_statistic_ci(len(samples), statistic, n_boot=n_boot, seed=seed), (
        f"bootstrap({n_boot}, recomputed)"
    )


def sample_rows(
    samples: Sequence[Sample],
    preds: Sequence[Prediction],
    per_sample: dict[str, list[float]],
    primary: str,
) -> list[dict[str, Any]]:
    """Rows of samples.jsonl: id, raw output, parsed answer, status, score(s)."""
    rows = []
    for i, (sample, pred) in enumerate(zip(samples, preds, strict=True)):
        scores = {name: values[i] for name, values in per_sample.items()}
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
        if pred.latency_s is not None:
            row["latency_s"] = pred.latency_s
        if pred.metadata:
            row["metadata"] = pred.metadata
        if sample.meta:
            row["meta"] = dict(sample.meta)
        rows.append(row)
    return rows
