"""`ndcg_at_k`: normalised discounted cumulative gain with binary, novelty-based gains.

Result r_i gains 1 when it hits a gold item that no earlier result hit, else 0::

    DCG@k  = sum_{i=1..k} gain_i / log2(i + 1)
    IDCG@k = sum_{i=1..min(k, |G|)} 1 / log2(i + 1)
    nDCG@k = DCG@k / IDCG@k

averaged over the answerable queries (an unanswered one scores 0). When every gold item maps to
exactly one result item this is trec_eval's ``ndcg_cut_k`` with binary qrels (ir-measures
``nDCG@k``): a result hitting several new gold items still gains 1.
"""

from __future__ import annotations

import math

from benchreg.core import registry
from benchreg.core.ranking.base import RankingMetric
from benchreg.core.ranking.resolution import ResolvedRanking, gold_count
from benchreg.core.types import Sample


def ideal_dcg(n_gold: int, k: int) -> float:
    return sum(1.0 / math.log2(i + 1) for i in range(1, min(k, n_gold) + 1))


def ndcg_at(resolved: ResolvedRanking, k: int) -> float:
    if not resolved.n_gold:
        return 0.0
    gain_ranks = {r for r in resolved.first_hit if 0 < r <= k}  # ranks that hit a new gold item
    dcg = sum(1.0 / math.log2(r + 1) for r in gain_ranks)
    return dcg / ideal_dcg(resolved.n_gold, k)


@registry.metrics.register("ndcg_at_k")
class NDCGAtK(RankingMetric):
    def __init__(self, k: int = 10, gate: str | None = None) -> None:
        super().__init__(gate)
        self.k = int(k)

    @property
    def names(self) -> tuple[str, ...]:
        return (f"ndcg@{self.k}",)

    def applies(self, sample: Sample) -> bool:
        return gold_count(sample) > 0

    def value(self, sample: Sample, resolved: ResolvedRanking) -> float:
        return ndcg_at(resolved, self.k)
