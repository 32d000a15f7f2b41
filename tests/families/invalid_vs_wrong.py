"""Shared by the "invalid never beats wrong" tests (issue 37, item 2): a metric's point values,
which direction is better for each output, and the comparison."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from benchreg import load_task
from benchreg.core.metric import Metric
from benchreg.core.pipeline import data_root_for, load_dataset
from benchreg.core.types import Prediction, Sample, Status

# Outputs where lower is better (every other output: higher is better).
LOWER_IS_BETTER = ("false_recall",)
# Registered metrics that are no score of the answer, so neither better nor worse: how much the
# top results span (a diagnostic beside recall; an answer without results has none to measure)
# and how long the request took (invalid answers' latencies are the system's, not the answer's).
DESCRIPTIVE = {
    "context_at_k": "extent of the top results, a diagnostic with no better direction",
    "latency_quantile": "request latency, not a score of the answer",
}
TOL = 1e-12
NOT_ANSWERS = (Status.INVALID, Status.MISSING, Status.ERROR)


def values(metric: Metric, samples: Sequence[Sample], preds: Sequence[Prediction]) -> dict:
    """The metric's point values over all samples, as the core computes them."""
    stats = metric.stats(samples, preds)
    n = len(samples)
    point = metric.reduce(metric.totals(stats, np.ones((1, n)))[0], n)
    return dict(zip(metric.names, map(float, np.ravel(point)), strict=True))


def not_better(invalid: dict[str, float], wrong: dict[str, float]) -> list[str]:
    """The outputs where the invalid answer scored better than the wrong one (empty: none)."""
    worse = []
    for name, value in invalid.items():
        lower = name.startswith(LOWER_IS_BETTER)
        if (value < wrong[name] - TOL) if lower else (value > wrong[name] + TOL):
            worse.append(f"{name}: invalid {value!r} vs wrong {wrong[name]!r}")
    return worse


def not_an_answer(sample_id: str, status: Status, answer: object = None) -> Prediction:
    return Prediction(sample_id, answer=answer, status=status, detail="planted")


def embedded(task: str) -> tuple[list[Sample], list[Metric]]:
    """A task's embedded sample and its metric instances (descriptive ones left out)."""
    spec = load_task(task)
    dataset = load_dataset(spec, spec.resolve_view(None), data_root_for(spec, {}))
    metrics = [b.metric for b in spec.metrics if b.ref.name not in DESCRIPTIVE]
    return list(dataset.samples), metrics
