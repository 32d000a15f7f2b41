"""`recall_at_k`: share of the gold items covered by the top k results.

For an answerable query with gold items G (|G| > 0) and results r_1..r_n::

    recall@k = |{g in G : some r_i with i <= k hits g}| / |G|

averaged over the answerable queries (an unanswered one scores 0). With one relevant atom per
gold item this is trec_eval's ``recall_k`` (ir-measures ``R@k``).
"""

from __future__ import annotations

from benchreg.core import registry
from benchreg.core.ranking.base import RankingMetric
from benchreg.core.ranking.resolution import ResolvedRanking, gold_count
from benchreg.core.types import Sample


def recall_at(resolved: ResolvedRanking, k: int) -> float:
    if not resolved.n_gold:
        return 0.0
    return sum(1 for r in resolved.first_hit if 0 < r <= k) / resolved.n_gold


@registry.metrics.register("recall_at_k")
class RecallAtK(RankingMetric):
    def __init__(self, k: int = 10, gate: str | None = None) -> None:
        super().__init__(gate)
        self.k = int(k)

    @property
    def names(self) -> tuple[str, ...]:
        return (f"recall@{self.k}",)

    def applies(self, sample: Sample) -> bool:
        return gold_count(sample) > 0

    def value(self, sample: Sample, resolved: ResolvedRanking) -> float:
        return recall_at(resolved, self.k)
