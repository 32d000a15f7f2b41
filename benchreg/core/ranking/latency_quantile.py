"""`latency_quantile`: a quantile of the per-query latency (``Prediction.latency_s``).

Over the queries with a known latency x_(1) <= ... <= x_(m) (sorted), the q-quantile is the
linear interpolation of numpy's default method::

    h = (m - 1) q,   Q(q) = x_(floor h + 1) + (h - floor h) (x_(floor h + 2) - x_(floor h + 1))

A bootstrap resample with integer weights w_j counts x_j w_j times (the same formula over the
repeated values), so CIs resample queries like every other metric. ``n`` is the queries with a
latency (whatever their status), ``denominator`` all queries; the detail says so (``n_counts``)
and counts the rest (``not_counted``: no latency), which the tables show beside n.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchreg.core import registry
from benchreg.core.metric import Metric
from benchreg.core.ranking.gate import Gate
from benchreg.core.types import Prediction, Sample


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> np.ndarray:
    """Type-7 quantile of ``values`` (n,) repeated ``weights`` (..., n) times; NaN values are
    skipped; NaN where nothing is left (no query with a latency: not a result, shown blank)."""
    keep = ~np.isnan(values)
    order = np.argsort(values[keep], kind="stable")
    x = values[keep][order]
    w = np.asarray(weights, dtype=float)[..., keep][..., order]
    lead = w.shape[:-1]
    if x.size == 0:
        return np.full(lead, np.nan)
    cum = np.cumsum(w, axis=-1)
    total = cum[..., -1]
    h = (np.maximum(total, 1.0) - 1.0) * q
    lo, frac = np.floor(h), h - np.floor(h)
    # the value at 0-based position p of the repeated sorted list: first j with cum_j > p
    flat_cum = cum.reshape(-1, x.size)
    idx_lo = np.array(
        [np.searchsorted(c, p, side="right") for c, p in zip(flat_cum, lo.reshape(-1), strict=True)]
    )
    idx_hi = np.array(
        [
            np.searchsorted(c, p, side="right")
            for c, p in zip(flat_cum, (lo + 1).reshape(-1), strict=True)
        ]
    )
    idx_lo, idx_hi = np.minimum(idx_lo, x.size - 1), np.minimum(idx_hi, x.size - 1)
    out = x[idx_lo] + frac.reshape(-1) * (x[idx_hi] - x[idx_lo])
    return np.where(total.reshape(-1) > 0, out, np.nan).reshape(lead)


# what a latency's n counts: every answered request has a latency (an invalid answer's too: it
# is the system's time, not the answer's), so n is not the ok answers of the tables' n/denominator
N_COUNTS = "answers with a latency (any status)"


@registry.metrics.register("latency_quantile")
class LatencyQuantile(Metric):
    unit_range = False  # seconds: 0 and 1 are no bounds

    def __init__(self, q: float = 0.5, gate: str | None = None) -> None:
        if not 0.0 <= float(q) <= 1.0:
            raise ValueError(f"q must lie in [0, 1], got {q}")
        self.q = float(q)
        self.gate = Gate.parse(gate)

    @property
    def names(self) -> tuple[str, ...]:
        return (f"latency_p{round(self.q * 100):d}",)

    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        return np.array(
            [[p.latency_s if p.latency_s is not None else np.nan] for p in predictions],
            dtype=float,
        ).reshape(len(predictions), 1)

    def totals(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
        # a quantile is no function of column sums: carry the weights and the values of the
        # queries with a latency instead, after their count: [m, weights (m), values (m)]
        keep = ~np.isnan(stats[:, 0])
        m = int(keep.sum())
        kept = weights[..., keep]
        values = np.broadcast_to(stats[keep, 0], kept.shape)
        return np.concatenate([np.full((*kept.shape[:-1], 1), float(m)), kept, values], axis=-1)

    def reduce(self, totals: np.ndarray, n: int) -> np.ndarray:
        totals = np.asarray(totals, dtype=float)
        m = int(totals.reshape(-1)[0]) if totals.size else 0
        weights, values = totals[..., 1 : 1 + m], totals[..., 1 + m : 1 + 2 * m]
        flat_values = values.reshape(-1, m)[0] if values.size else np.zeros(0)
        return weighted_quantile(flat_values, weights, self.q)[..., None]

    def support(self, stats: np.ndarray, predictions: Sequence[Prediction]) -> tuple[int, int]:
        return int((~np.isnan(stats[:, 0])).sum()), len(stats)

    def detail(self, stats: np.ndarray) -> dict[str, Any]:
        """What ``n`` counts (:data:`N_COUNTS`: a request's latency, whatever became of its
        answer) and the queries without a latency (``not_counted``), so that n and they make up
        the denominator; the gate, where there is a value."""
        timed = ~np.isnan(stats[:, 0])
        out: dict[str, Any] = {"n_counts": N_COUNTS}
        if len(stats) - int(timed.sum()):
            out["not_counted"] = {"no latency": len(stats) - int(timed.sum())}
        if self.gate is None or not timed.any():
            return out
        value = float(weighted_quantile(stats[:, 0], np.ones(len(stats)), self.q))
        return {**out, **self.gate.report(value)}
