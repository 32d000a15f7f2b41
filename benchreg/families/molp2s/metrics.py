"""MolP2S scoring: accuracy with the spec's strict rules, and the spec's counts.

A missing record, a line marked invalid, and an index outside the candidate list are incorrect;
every sample of the file is in the denominator.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchreg.core import registry
from benchreg.core.types import MetricResult, Prediction, PredictionSet, Sample, Status


def hits(samples: Sequence[Sample], preds: Sequence[Prediction]) -> list[float]:
    return [
        1.0 if p.status is Status.OK and p.answer == s.gold else 0.0
        for s, p in zip(samples, preds, strict=True)
    ]


@registry.metrics.register("accuracy")
def accuracy(samples: Sequence[Sample], preds: Sequence[Prediction]) -> MetricResult:
    """accuracy = hits / tasks, where tasks = every record of the file."""
    per_sample = hits(samples, preds)
    n = len(samples)
    return MetricResult(sum(per_sample) / n if n else 0.0, n, n, per_sample)


@registry.counters.register("molp2s")
def molp2s_counts(
    samples: Sequence[Sample],
    preds: Sequence[Prediction],
    prediction_set: PredictionSet | None,
) -> dict[str, int]:
    statuses = [p.status for p in preds]
    return {
        "hits": int(sum(hits(samples, preds))),
        "tasks": len(samples),
        "missing": statuses.count(Status.MISSING),
        "invalid": statuses.count(Status.INVALID) + statuses.count(Status.ERROR),
        "out_of_range": statuses.count(Status.OUT_OF_RANGE),
    }
