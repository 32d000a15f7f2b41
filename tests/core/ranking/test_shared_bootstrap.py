"""The bootstrap CIs of `benchreg.core.scoring.score` (resamples drawn once for all metrics,
one product over the distinct non-constant columns) equal each metric's own
`bootstrap_totals_ci`, for the ranking metrics (latency quantiles included)."""

from __future__ import annotations

import numpy as np
import pytest

from benchreg.core import scoring
from benchreg.core.ranking.latency_quantile import LatencyQuantile
from benchreg.core.ranking.recall_at_k import RecallAtK
from benchreg.core.stats import (
    bootstrap_totals_ci,
    resample_counts,
    resample_indices,
    resample_weights,
)


def test_resamples_are_those_of_resample_weights() -> None:
    """Drawn in chunks of 2 (cells=100) and counted one chunk at a time: the same resamples."""
    chunks = list(resample_indices(37, 23, seed=5, cells=100))
    assert [len(chunk) for chunk in chunks] == [2] * 11 + [1]
    mine = np.concatenate([resample_counts(chunk, 37) for chunk in chunks])
    theirs = np.concatenate(list(resample_weights(37, 23, seed=5)))
    assert np.array_equal(mine, theirs)


@pytest.mark.parametrize("cells", [None, 400 * 7])  # one chunk; 43 chunks run in threads
@pytest.mark.parametrize("with_latency", [True, False])
def test_shared_bootstrap_equals_each_metric_alone(
    with_latency: bool, cells: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if cells is not None:
        monkeypatch.setattr(scoring, "BOOT_CELLS", cells)
    rng = np.random.default_rng(1)
    n = 400
    recall = np.zeros((n, 4))
    recall[:, 0] = rng.integers(0, 4, n) / 3
    recall[:, 1] = rng.random(n) < 0.8  # counted
    recall[:, 2] = recall[:, 1]  # scored
    other = np.column_stack([rng.random(n), np.ones(n), np.zeros(n), np.ones(n)])
    latency = np.where(rng.random((n, 1)) < 0.7, rng.random((n, 1)), np.nan)
    if not with_latency:
        latency[:] = np.nan
    jobs = [
        (RecallAtK(10), recall),
        (RecallAtK(5), other),
        (LatencyQuantile(0.5), latency),
        (LatencyQuantile(0.95), latency),
    ]
    shared = scoring._SharedBootstrap(n, 300, seed=4)
    for metric, stats in jobs:
        shared.add(metric, stats)
    got = shared.run()
    for (metric, stats), intervals in zip(jobs, got, strict=True):
        alone = bootstrap_totals_ci(stats, metric.totals, metric.reduce, n_boot=300, seed=4)
        assert np.allclose(intervals, alone, rtol=0, atol=1e-12, equal_nan=True)


def test_column_totals_equal_the_full_product() -> None:
    """Only distinct columns that are not all 0 or all 1 are multiplied; the totals are still
    ``weights @ columns`` (repeated, zero, one, NaN and -0.0 columns mixed in)."""
    rng = np.random.default_rng(3)
    a, b = rng.random(50), (rng.random(50) < 0.5).astype(float)
    nan_col = np.where(rng.random(50) < 0.1, np.nan, 2.0)
    columns = np.stack(
        [a, b, a, np.zeros(50), np.ones(50), b, nan_col, np.full(50, -0.0), nan_col], axis=1
    )
    weights = rng.integers(0, 3, size=(7, 50)).astype(float)
    got = scoring._ColumnTotals(columns)(weights)
    assert np.allclose(got, weights @ columns, rtol=0, atol=1e-12, equal_nan=True)
    assert scoring._ColumnTotals(columns).distinct.shape[1] == 3  # a, b, the NaN column
