"""`context_at_k`: how much the top k results span, in the modality's unit (pages, turns,
seconds, lines, share of the screen), so that coarse results are visible beside recall.

The resolver records the extent e_i of the first results (``ResolvedRanking.extents``, None
where it cannot tell, e.g. a code symbol of a commit whose files are not in the corpus). For a
query whose top k holds at least one result of known extent::

    context@k = mean { e_i : i <= k, e_i known }

averaged over those queries. The denominator is the queries with a scored answer holding at
least one result of known extent (an abstention or an unscored answer has no context to
measure); ``detail`` gives the unit, ``no_results`` (scored answers with an empty top k) and
``unknown`` (results of unknown extent in the top k, over all queries). A whole-document
result of a 100-page PDF counts 100 pages: a system that ranks whole files cannot hide behind
its recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchreg.core import registry
from benchreg.core.metric import Metric
from benchreg.core.ranking.resolution import ResolvedRanking, resolved_of
from benchreg.core.types import Prediction, Sample

# columns: sum of the per-query means, counted, results without an extent, empty top k
VALUE, COUNTED, UNKNOWN, EMPTY = 0, 1, 2, 3


def context_of(resolved: ResolvedRanking, k: int) -> tuple[float | None, int]:
    """(mean known extent of the top ``k``, or None; results of unknown extent among them)."""
    top = resolved.extents[:k]
    known = [e for e in top if e is not None]
    return (sum(known) / len(known) if known else None), len(top) - len(known)


@registry.metrics.register("context_at_k")
class ContextAtK(Metric):
    def __init__(self, k: int = 10) -> None:
        self.k = int(k)
        self._unit: str | None = None  # the unit the resolver reported (one per task)

    @property
    def names(self) -> tuple[str, ...]:
        return (f"context@{self.k}",)

    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        rows = np.zeros((len(predictions), 4))
        for i, prediction in enumerate(predictions):
            resolved = resolved_of(prediction)
            if resolved is None:
                continue
            if resolved.extent_unit is not None:
                self._unit = resolved.extent_unit
            mean, unknown = context_of(resolved, self.k)
            rows[i, UNKNOWN] = unknown
            if mean is not None:
                rows[i, VALUE], rows[i, COUNTED] = mean, 1.0
            elif min(resolved.n_results, self.k) == 0:
                rows[i, EMPTY] = 1.0
        return rows

    def reduce(self, totals: np.ndarray, n: int) -> np.ndarray:
        totals = np.asarray(totals, dtype=float)
        num, den = totals[..., VALUE : VALUE + 1], totals[..., COUNTED : COUNTED + 1]
        return np.divide(num, den, out=np.zeros_like(num), where=den > 0)

    def support(self, stats: np.ndarray, predictions: Sequence[Prediction]) -> tuple[int, int]:
        counted = int(stats[:, COUNTED].sum()) if len(stats) else 0
        return counted, counted

    def detail(self, stats: np.ndarray) -> dict[str, Any]:
        totals = stats.sum(axis=0) if len(stats) else np.zeros(4)
        out: dict[str, Any] = {
            "unit": self._unit,
            "no_results": int(totals[EMPTY]),
            "unknown": int(totals[UNKNOWN]),
        }
        return out
