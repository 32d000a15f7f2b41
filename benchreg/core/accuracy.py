"""Metrics every family may name."""

from __future__ import annotations

from collections.abc import Sequence

from benchreg.core import registry
from benchreg.core.metric import MeanMetric, is_hit
from benchreg.core.types import Prediction, Sample


@registry.metrics.register("accuracy")
class Accuracy(MeanMetric):
    """accuracy = hits / samples: an ok answer equal to the gold answer is a hit; a missing,
    invalid, out-of-range or failed answer is not, and every sample is in the denominator."""

    outputs = ("accuracy",)

    def score(self, sample: Sample, prediction: Prediction) -> Sequence[float]:
        return (1.0 if is_hit(sample, prediction) else 0.0,)
