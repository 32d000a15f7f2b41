"""What ranked answers need, in any family: a ranked-list answer with item metadata, the
resolution of a ranking against the sample's gold (``prediction.resolved``), gates, and the
ranking metrics (one module each, the formula in its docstring).

Registered metrics: `recall_at_k`, `mrr`, `ndcg_at_k`, `false_recall`, `clean_at_k`,
`context_at_k`, `latency_quantile`. Each but `context_at_k` takes an optional `gate` param
(e.g. ``">= 0.90"``) reported beside its value in ``detail`` as ``gate`` and ``pass``.
"""

from benchreg.core.ranking import (  # noqa: F401  (modules register their metrics)
    clean_at_k,
    context_at_k,
    false_recall,
    latency_quantile,
    mrr,
    ndcg_at_k,
    recall_at_k,
)
from benchreg.core.ranking.answer import RankedList, parse_ranked_list
from benchreg.core.ranking.gate import Gate
from benchreg.core.ranking.resolution import ResolvedRanking

__all__ = ["Gate", "RankedList", "ResolvedRanking", "parse_ranked_list"]
