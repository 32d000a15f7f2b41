"""Metrics over every question of a file, and the prediction counts.

Per question (prediction p, a valid option index):
- relative score = effective(p) / best effective of the option set (1.0 when that best is 0);
- exact match = 1 when p is one of the best indices (ties kept), else 0;
- yield ratio = yield(p) / best yield of the option set (1.0 when that best is 0).
A missing, invalid, out-of-range or failed prediction scores 0 on all three. Each metric is the
mean over ALL questions of the file (denominator); ``n`` is the number of valid predictions.

``source: formula`` (default) recomputes effective scores from ``meta.scores`` with the spec's
formula (an option whose scores cannot be read falls back to ``meta.effective_scores``);
``source: stored`` uses ``meta.option_relative_scores``, ``answer`` and ``meta.yields`` as given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.types import MetricResult, Prediction, PredictionSet, Sample, Status
from benchreg.families.reaction_mc.effective import QuestionScores, stored_scores

SOURCES = ("formula", "stored")


def question_scores(sample: Sample, source: str) -> QuestionScores:
    if source == "formula":
        return QuestionScores.from_json(sample.meta["formula"])
    if source == "stored":
        n = len(sample.input["options"])
        return stored_scores(sample.meta["release"], sample.gold, n)
    raise BenchregError(
        f"metric param source={source!r} is not one of {SOURCES}", where=f"sample {sample.id}"
    )


def _mean_metric(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    source: str,
    score: Callable[[QuestionScores, int], float],
) -> MetricResult:
    per_sample: list[float] = []
    valid = 0
    fallbacks = 0
    for sample, pred in zip(samples, predictions, strict=True):
        scores = question_scores(sample, source)
        fallbacks += bool(scores.fallback_options)
        if pred.status is Status.OK:
            valid += 1
            per_sample.append(float(score(scores, pred.answer)))
        else:
            per_sample.append(0.0)
    total = len(per_sample)
    value = sum(per_sample) / total if total else 0.0
    detail: dict[str, Any] = {"source": source, "not_valid_scored_0": total - valid}
    if fallbacks:
        detail["questions_with_unreadable_scores"] = fallbacks
    return MetricResult(value, n=valid, denominator=total, per_sample=per_sample, detail=detail)


@registry.metrics.register("reaction_mc_relative_score")
def avg_relative_score(
    samples: Sequence[Sample], predictions: Sequence[Prediction], source: str = "formula"
) -> MetricResult:
    return _mean_metric(samples, predictions, source, lambda s, i: s.relative[i])


@registry.metrics.register("reaction_mc_exact_match")
def exact_match_accuracy(
    samples: Sequence[Sample], predictions: Sequence[Prediction], source: str = "formula"
) -> MetricResult:
    return _mean_metric(samples, predictions, source, lambda s, i: float(i in s.best))


@registry.metrics.register("reaction_mc_yield_ratio")
def avg_yield_ratio(
    samples: Sequence[Sample], predictions: Sequence[Prediction], source: str = "formula"
) -> MetricResult:
    return _mean_metric(samples, predictions, source, lambda s, i: s.yield_ratio(i))


@registry.counters.register("reaction_mc")
def count_predictions(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    prediction_set: PredictionSet | None,
) -> dict[str, int]:
    """missing, invalid (including out-of-range), unknown_ids, plus ok / out_of_range / error."""
    by_status = {status: 0 for status in Status}
    for pred in predictions:
        by_status[pred.status] += 1
    return {
        "questions": len(predictions),
        "ok": by_status[Status.OK],
        "missing": by_status[Status.MISSING],
        "invalid": by_status[Status.INVALID] + by_status[Status.OUT_OF_RANGE],
        "out_of_range": by_status[Status.OUT_OF_RANGE],
        "error": by_status[Status.ERROR],
        "unknown_ids": len(prediction_set.unknown_ids) if prediction_set else 0,
    }
