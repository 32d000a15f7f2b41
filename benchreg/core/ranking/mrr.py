"""`mrr`: mean reciprocal rank of the first result that hits any gold item.

For an answerable query::

    rr = 1 / min{i : r_i hits some g in G}     (0 when no result hits)

over the whole result list (optionally cut at ``k``), averaged over the answerable queries (an
unanswered one scores 0). This is trec_eval's ``recip_rank`` (ir-measures ``RR``).
"""

from __future__ import annotations

from benchreg.core import registry
from benchreg.core.ranking.base import RankingMetric
from benchreg.core.ranking.resolution import ResolvedRanking, gold_count
from benchreg.core.types import Sample


def reciprocal_rank(resolved: ResolvedRanking, k: int | None = None) -> float:
    rank = resolved.first_relevant_rank()
    return 1.0 / rank if rank and (k is None or rank <= k) else 0.0


@registry.metrics.register("mrr")
class MRR(RankingMetric):
    def __init__(self, k: int | None = None, gate: str | None = None) -> None:
        super().__init__(gate)
        self.k = int(k) if k is not None else None

    @property
    def names(self) -> tuple[str, ...]:
        return ("mrr" if self.k is None else f"mrr@{self.k}",)

    def applies(self, sample: Sample) -> bool:
        return gold_count(sample) > 0

    def value(self, sample: Sample, resolved: ResolvedRanking) -> float:
        return reciprocal_rank(resolved, self.k)
