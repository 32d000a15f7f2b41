"""`false_recall`: share of unanswerable queries (no gold items) answered with strong evidence.

For a query with G = {} and results r_1..r_n with scores s_i::

    false = 1  if some r_i has s_i >= strong_score, or s_i is null   (strong_score set)
    false = 1  if n > 0                                               (strong_score unset)
    false = 0  otherwise

averaged over the unanswerable queries. A query without a scored answer (missing, invalid,
error) counts as a false recall: nothing shows that the system abstained.
"""

from __future__ import annotations

from benchreg.core import registry
from benchreg.core.ranking.base import RankingMetric
from benchreg.core.ranking.resolution import ResolvedRanking, gold_count
from benchreg.core.types import Sample


def is_false_recall(resolved: ResolvedRanking, strong_score: float | None) -> bool:
    if resolved.n_results == 0:
        return False
    if strong_score is None or resolved.n_unscored:
        return True
    return resolved.max_score is not None and resolved.max_score >= strong_score


@registry.metrics.register("false_recall")
class FalseRecall(RankingMetric):
    missing_value = 1.0

    def __init__(self, strong_score: float | None = None, gate: str | None = None) -> None:
        super().__init__(gate)
        self.strong_score = float(strong_score) if strong_score is not None else None

    @property
    def names(self) -> tuple[str, ...]:
        return ("false_recall",)

    def applies(self, sample: Sample) -> bool:
        return gold_count(sample) == 0

    def value(self, sample: Sample, resolved: ResolvedRanking) -> float:
        return float(is_false_recall(resolved, self.strong_score))
