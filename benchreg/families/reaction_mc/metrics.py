"""Metric `reaction_mc_scores` (three values from one pass) and the family counter.

Per question (prediction p, a valid option index):
- ``avg_relative_score`` (primary) = effective(p) / best effective of the option set (1.0 when
  that best is 0);
- ``exact_match_accuracy`` = 1 when p is one of the best indices (ties kept), else 0;
- ``avg_yield_ratio`` = yield(p) / best yield of the option set (1.0 when that best is 0).
A missing, invalid, out-of-range or failed prediction scores 0 on all three. Each value is the
mean over ALL questions of the file (denominator); ``n`` is the number of valid predictions.

``source: formula`` (default) recomputes effective scores from ``meta.scores`` with the spec's
formula (an option whose scores cannot be read falls back to ``meta.effective_scores``);
``source: stored`` uses ``meta.option_relative_scores``, ``answer`` and ``meta.yields`` as given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.metric import MeanMetric
from benchreg.core.types import Prediction, Sample, Status
from benchreg.families.reaction_mc.effective import QuestionScores, stored_scores

SOURCES = ("formula", "stored")
RELATIVE, EXACT, YIELD_RATIO = "avg_relative_score", "exact_match_accuracy", "avg_yield_ratio"
# Statistic columns after the three scores: valid prediction (0/1), question scored with a
# fallback for unreadable outcome notations (0/1). They give `n` and the detail.
VALID, FALLBACK = 3, 4


def question_scores(sample: Sample, source: str) -> QuestionScores:
    if source == "formula":
        return QuestionScores.from_json(sample.meta["formula"])
    n = len(sample.input["options"])
    return stored_scores(sample.meta["release"], sample.gold, n)


@registry.metrics.register("reaction_mc_scores")
class ReactionScores(MeanMetric):
    """Relative score, exact match and yield ratio of the predicted option."""

    outputs = (RELATIVE, EXACT, YIELD_RATIO)
    primary_output = RELATIVE

    def __init__(self, source: str = "formula") -> None:
        if source not in SOURCES:
            raise BenchregError(
                f"metric reaction_mc_scores: source={source!r} is not one of {SOURCES}",
                fix="use `source: formula` or `source: stored`",
            )
        self.source = source

    def row(self, sample: Sample, prediction: Prediction) -> tuple[float, ...]:
        scores = question_scores(sample, self.source)
        fallback = float(bool(scores.fallback_options))
        if prediction.status is not Status.OK:
            return (0.0, 0.0, 0.0, 0.0, fallback)
        index = prediction.answer
        return (
            float(scores.relative[index]),
            float(index in scores.best),
            float(scores.yield_ratio(index)),
            1.0,
            fallback,
        )

    def score(self, sample: Sample, prediction: Prediction) -> Sequence[float]:
        return self.row(sample, prediction)[:VALID]

    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        rows = [self.row(s, p) for s, p in zip(samples, predictions, strict=True)]
        return np.asarray(rows, dtype=float).reshape(len(rows), FALLBACK + 1)

    def reduce(self, totals: np.ndarray, n: int) -> np.ndarray:
        return super().reduce(totals[..., :VALID], n)

    def sample_scores(self, stats: np.ndarray) -> np.ndarray:
        return stats[:, :VALID]

    def support(self, stats: np.ndarray, predictions: Sequence[Prediction]) -> tuple[int, int]:
        return int(stats[:, VALID].sum()), len(stats)

    def detail(self, stats: np.ndarray) -> dict[str, Any]:
        detail: dict[str, Any] = {
            "source": self.source,
            "not_valid_scored_0": int(len(stats) - stats[:, VALID].sum()),
        }
        fallbacks = int(stats[:, FALLBACK].sum())
        if fallbacks:
            detail["questions_with_unreadable_scores"] = fallbacks
        return detail


@registry.counts.register("reaction_mc")
def count_questions(
    samples: Sequence[Sample], predictions: Sequence[Prediction]
) -> dict[str, int]:
    """questions; questions with unreadable outcome notations (scored with the stored effective
    scores of those options); questions whose options all have effective score 0."""
    formula = [s.meta["formula"] for s in samples]
    return {
        "questions": len(samples),
        "questions_with_unreadable_scores": sum(1 for q in formula if q["fallback_options"]),
        "questions_all_zero": sum(1 for q in formula if q["best_effective"] <= 0),
    }
