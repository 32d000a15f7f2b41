"""Metrics as per-sample statistics plus an aggregate.

A metric turns each (sample, prediction) pair into a row of statistics (tp/fp/fn counts, a 0/1
hit, a ROUGE value, label ids, ...) and reduces the column totals of those rows to one or more
values (precision, recall and F1 from one computation). Because the value depends on the rows only
through their totals, a bootstrap resample is a weighted total (resample counts @ rows), so CIs
never recompute a metric from raw answers.

Write a metric by subclassing :class:`Metric` (or :class:`MeanMetric` when the value is the mean
of a per-sample score) and registering a factory (usually the class itself) by name:

    @registry.metrics.register("accuracy")
    class Accuracy(MeanMetric):
        outputs = ("accuracy",)
        def score(self, sample, prediction): return [float(prediction.ok and ...)]

Task entries name it and may pass keyword params (``params:``); an unknown param is an error.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from benchreg.core.types import Prediction, Sample, Status


@dataclass(slots=True)
class MetricValue:
    """One reported number with its support: ``n`` counted samples out of ``denominator``.

    A value over no sample at all (``denominator`` 0, e.g. false recall of a set without
    unanswerable entries) is no number: its value is None (null in metrics.json), without a
    CI; so is a NaN value (e.g. a latency quantile when no answer has a latency)."""

    value: float | None
    n: int
    denominator: int
    ci95: tuple[float, float] | None = None
    ci_method: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    clusters: int | None = None  # clusters resampled, when the CI is a cluster bootstrap

    def __post_init__(self) -> None:
        if self.denominator == 0 or (self.value is not None and self.value != self.value):
            self.value, self.ci95, self.ci_method = None, None, None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "n": self.n, "denominator": self.denominator}
        if self.ci95 is not None:
            out["ci95"] = list(self.ci95)
            out["ci_method"] = self.ci_method
            if self.clusters is not None:
                out["clusters"] = self.clusters
        if self.detail:
            out["detail"] = self.detail
        return out


class Metric(ABC):
    """Per-sample statistics (an ``(n, k)`` array) reduced to ``len(names)`` values."""

    outputs: ClassVar[tuple[str, ...]] = ("value",)
    primary_output: ClassVar[str | None] = None  # default: the last output (e.g. f1 after P, R)
    # values lie in [0, 1]: a zero-width interval is widened (stats.widen_zero_width); a
    # metric in other units (seconds) says False, since no proportion bounds its spread
    unit_range: ClassVar[bool] = True

    @property
    def names(self) -> tuple[str, ...]:
        """Output names; an instance may compute them from its params."""
        return self.outputs

    @property
    def primary(self) -> str:
        return self.primary_output or self.names[-1]

    @abstractmethod
    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        """An ``(n, k)`` float array, one row per sample, rows independent of each other."""

    @abstractmethod
    def reduce(self, totals: np.ndarray, n: int) -> np.ndarray:
        """Column totals ``(..., k)`` of ``n`` rows -> values ``(..., len(names))``."""

    def totals(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Weighted column totals: ``weights`` is ``(b, n)`` resample counts; returns ``(b, k)``."""
        return weights @ stats

    def support(
        self, stats: np.ndarray, predictions: Sequence[Prediction]
    ) -> tuple[int, int]:
        """(n, denominator) of every output: by default every sample counts."""
        return len(predictions), len(predictions)

    def detail(self, stats: np.ndarray) -> dict[str, Any]:
        return {}

    def sample_scores(self, stats: np.ndarray) -> np.ndarray | None:
        """Per-sample score of each output, ``(n, len(names))``, when the value is their mean."""
        return None

    def query_scores(self, stats: np.ndarray) -> np.ndarray | None:
        """Per-sample score of each output when the value is their mean over the samples it
        applies to, NaN for the others (e.g. recall over the answerable queries only); written
        to samples.jsonl and paired by `compare`, never used for a Wilson interval."""
        return None


class MeanMetric(Metric):
    """The value of each output is the mean over samples of a per-sample score."""

    @abstractmethod
    def score(self, sample: Sample, prediction: Prediction) -> Sequence[float]:
        """One score per output for one sample."""

    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        rows = [self.score(s, p) for s, p in zip(samples, predictions, strict=True)]
        return np.asarray(rows, dtype=float).reshape(len(rows), len(self.names))

    def reduce(self, totals: np.ndarray, n: int) -> np.ndarray:
        return totals / n if n else np.zeros_like(totals)

    def sample_scores(self, stats: np.ndarray) -> np.ndarray:
        return stats


SCORED_AS_GIVEN = frozenset({Status.OK, Status.OUT_OF_RANGE})


def scored_answer(prediction: Prediction, empty: Any) -> Any:
    """The answer a metric scores: as given when ok or out of range, else ``empty``."""
    return prediction.answer if prediction.status in SCORED_AS_GIVEN else empty


def is_hit(sample: Sample, prediction: Prediction) -> bool:
    return prediction.status is Status.OK and prediction.answer == sample.gold
