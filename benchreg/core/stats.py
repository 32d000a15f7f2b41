"""Confidence intervals and paired tests used by reports and analyses.

- Wilson score interval for a binomial proportion (accuracy, hit rates).
- Percentile bootstrap for a mean or for any statistic recomputed on resampled indices.
- Exact McNemar test on discordant pairs (two-sided binomial test with p = 1/2).
- Wilcoxon signed-rank test (scipy) for paired continuous differences.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

Z95 = 1.959963984540054


def wilson_ci(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval; (0, 1) when n == 0."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_mean_ci(
    values: Sequence[float], n_boot: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.size, size=(n_boot, arr.size))
    means = arr[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (float(lo), float(hi))


def bootstrap_statistic_ci(
    n: int, statistic: Callable[[np.ndarray], float], n_boot: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap CI of ``statistic(indices)`` over resampled sample indices."""
    if n == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    stats = [statistic(rng.integers(0, n, size=n)) for _ in range(n_boot)]
    lo, hi = np.percentile(stats, [2.5, 97.5])
    return (float(lo), float(hi))


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b (1->0) and c (0->1)."""
    from scipy.stats import binomtest

    if b + c == 0:
        return 1.0
    return float(binomtest(min(b, c), b + c, 0.5, alternative="two-sided").pvalue)


def binomial_greater(successes: int, n: int, p: float) -> float:
    """One-sided exact binomial p-value that the rate exceeds ``p``."""
    from scipy.stats import binomtest

    if n == 0:
        return 1.0
    return float(binomtest(successes, n, p, alternative="greater").pvalue)


def wilcoxon_signed_rank(differences: Sequence[float]) -> float:
    """Two-sided Wilcoxon signed-rank p-value; 1.0 when every difference is zero."""
    from scipy.stats import wilcoxon

    diffs = np.asarray(differences, dtype=float)
    if diffs.size == 0 or np.all(diffs == 0):
        return 1.0
    return float(wilcoxon(diffs, zero_method="wilcox").pvalue)


def paired_bootstrap_ci(
    differences: Sequence[float], n_boot: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean paired difference."""
    return bootstrap_mean_ci(differences, n_boot=n_boot, seed=seed)
