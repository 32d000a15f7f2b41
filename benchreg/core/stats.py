"""Confidence intervals and paired tests used by reports and analyses.

- Wilson score interval for a binomial proportion (accuracy, hit rates).
- Percentile bootstrap over per-sample statistics, resampled in chunks (memory O(chunk x n));
  the cluster bootstrap resamples whole clusters of samples (samples sharing a source).
- A bootstrap interval with no width (scores all at 0 or 1, clusters whose means agree) is
  replaced by the Wilson interval of the value over the units (:func:`widen_zero_width`).
- Chen et al.'s unbiased pass@k estimator (repeated answers per sample).
- Exact McNemar test on discordant pairs (two-sided binomial test with p = 1/2).
- Wilcoxon signed-rank test (scipy) for paired continuous differences.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np

Z95 = 1.959963984540054


def wilson_ci(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval; (0, 1) when n == 0 (``successes`` may be a fractional count:
    ``p = successes / n``)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at k = 0 (k = n) the bound is exactly 0 (1): rounding must not leave the value outside
    lo = 0.0 if p <= 0.0 else max(0.0, centre - half)
    hi = 1.0 if p >= 1.0 else min(1.0, centre + half)
    return (lo, hi)


RESAMPLE_CELLS = 250_000  # resample-count cells held at once: memory O(n + chunk x n)


def resample_weights(
    n: int, n_boot: int, seed: int, cells: int | None = None
) -> Iterator[np.ndarray]:
    """Bootstrap resamples of ``n`` items as count matrices ``(chunk, n)``, in chunks of about
    ``cells`` counts (default :data:`RESAMPLE_CELLS`).

    Resample ``b`` draws ``n`` indices with ``rng.integers(0, n, size=n)``, in order, so the
    resamples are the same whatever the chunk size (and the same as drawing them one by one).
    """
    for idx in resample_indices(n, n_boot, seed, cells):
        yield resample_counts(idx, n)


def resample_indices(
    n: int, n_boot: int, seed: int, cells: int | None = None
) -> Iterator[np.ndarray]:
    """The drawn indices of :func:`resample_weights`' chunks, ``(chunk, n)`` each: the part
    that has to run in order (one generator); :func:`resample_counts` turns a chunk into its
    counts, in any thread."""
    rng = np.random.default_rng(seed)
    cells = RESAMPLE_CELLS if cells is None else cells  # read at call time (tests change it)
    chunk = max(1, min(n_boot, cells // max(n, 1)))
    for start in range(0, n_boot, chunk):
        yield rng.integers(0, n, size=(min(chunk, n_boot - start), n))


def resample_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """The count matrix of a chunk of drawn indices (consumed: the indices are offset in
    place, resample r's counts in cells r*n .. r*n + n - 1)."""
    b = len(idx)
    idx += np.arange(b)[:, None] * n
    return np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(float)


def cluster_weights(counts: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Per-sample weights ``(b, n)`` of a cluster resample: ``counts`` ``(b, clusters)`` says
    how often each cluster was drawn, ``members[i]`` is sample i's cluster. Each row is scaled
    to total n: a resample of clusters holds a varying number of samples, and metrics reduce
    weighted totals with the sample count n (a mean divides by n; ratios are unchanged)."""
    weights = counts[:, members]
    return weights * (len(members) / weights.sum(axis=1, keepdims=True))


def cluster_ids(keys: Sequence[object]) -> np.ndarray:
    """Each sample's cluster index (0..clusters-1, in order of first appearance)."""
    first: dict[object, int] = {}
    return np.asarray([first.setdefault(key, len(first)) for key in keys], dtype=np.int64)


def resampled_weights(
    n: int, n_boot: int, seed: int, clusters: np.ndarray | None = None
) -> Iterator[np.ndarray]:
    """Resample weights ``(chunk, n)``: of samples, or of whole clusters (``clusters[i]``:
    sample i's cluster index) when given."""
    if clusters is None:
        yield from resample_weights(n, n_boot, seed)
        return
    count = int(clusters.max()) + 1 if len(clusters) else 0
    for idx in resample_indices(count, n_boot, seed):
        yield cluster_weights(resample_counts(idx, count), clusters)


def bootstrap_totals_ci(
    stats: np.ndarray,
    totals: Callable[[np.ndarray, np.ndarray], np.ndarray],
    reduce: Callable[[np.ndarray, int], np.ndarray],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    clusters: np.ndarray | None = None,
) -> list[tuple[float, float]]:
    """Percentile bootstrap CIs of ``reduce(totals(stats, weights), n)``, one per output.

    ``stats`` holds one row of per-sample statistics per sample; ``totals`` gives the weighted
    column totals of a resample, ``reduce`` turns totals into the metric's values. With
    ``clusters`` (sample i's cluster index) whole clusters are resampled.
    """
    n = len(stats)
    values = np.concatenate(
        [
            np.atleast_2d(reduce(totals(stats, weights), n).reshape(len(weights), -1))
            for weights in resampled_weights(n, n_boot, seed, clusters)
        ]
    )
    lo, hi = np.percentile(values, [2.5, 97.5], axis=0)
    return [(float(a), float(b)) for a, b in zip(lo, hi, strict=True)]


def bootstrap_mean_ci(
    values: Sequence[float],
    n_boot: int = 2000,
    seed: int = 0,
    clusters: np.ndarray | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean (of whole clusters' samples, with ``clusters``)."""
    arr = np.asarray(values, dtype=float).reshape(-1, 1)
    if arr.size == 0:
        return (float("nan"), float("nan"))
    return bootstrap_totals_ci(
        arr, lambda s, w: w @ s, lambda t, n: t / n, n_boot=n_boot, seed=seed, clusters=clusters
    )[0]


ZERO_WIDTH = 1e-12  # an interval no wider than this has no width


def widen_zero_width(
    value: float | None, ci: tuple[float, float] | None, units: int
) -> tuple[float, float] | None:
    """The Wilson interval of ``value`` as a proportion of ``units``, for a value in [0, 1]
    whose bootstrap interval has no width; None when the interval has width.

    A zero-width interval claims certainty that n units cannot give: it comes from scores that
    all sit at 0 or 1 (every resample gives the bound), or from clusters whose means all agree.
    A score in [0, 1] with mean p varies at most as a 0/1 score does (variance <= p(1 - p)), so
    the Wilson interval of p over the units is an honest, if cautious, interval of the mean; at
    the bound it is that of the share of units there (k = n of n, or 0 of n). ``units`` are
    samples, or clusters when whole clusters were resampled."""
    # a width within rounding of 0 is none (percentiles of equal ratios may differ in the last bit)
    if value is None or ci is None or units <= 0 or ci[1] - ci[0] > ZERO_WIDTH:
        return None
    if not -1e-9 <= value <= 1.0 + 1e-9:  # a mean of [0, 1] scores, to rounding
        return None
    return wilson_ci(min(max(value, 0.0), 1.0) * units, units)


def pass_at_k(n: int, correct: Sequence[int] | np.ndarray, k: int) -> np.ndarray:
    """Chen et al. (2021)'s unbiased estimator of pass@k, one value per problem:
    ``1 - C(n - c, k) / C(n, k)`` with ``n`` answers drawn per problem, ``c`` of them right
    (``correct``), ``1 <= k <= n``. Computed in the paper's product form
    ``1 - prod_{i = n - c + 1}^{n} (1 - k / i)``, which never builds a large binomial."""
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n, got k={k}, n={n}")
    counts = np.asarray(correct, dtype=int)
    if ((counts < 0) | (counts > n)).any():
        raise ValueError(f"right answers per problem must lie in 0..{n}")
    by_count = {  # one product per distinct count: the problems share a few of them
        int(c): 1.0 if n - c < k else 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))
        for c in np.unique(counts)
    }
    return np.array([by_count[int(c)] for c in counts], dtype=float)


# The two exact binomial tests below: up to EXACT_TAIL_MAX trials, the tail is summed here (in
# integers for p = 1/2, in log space otherwise: what scipy.stats.binomtest gives, to ~1e-12
# relative); beyond that, scipy.special's binomial tails. Importing scipy is slower than the sums
# for the few hundred records a sweep of the embedded sample pairs.
EXACT_TAIL_MAX = 2000


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b (1->0) and c (0->1)."""
    n, k = b + c, min(b, c)
    if 2 * k == n:  # includes b = c = 0
        return 1.0
    # Binomial(n, 1/2) is symmetric: both tails as extreme as k weigh the same.
    if n <= EXACT_TAIL_MAX:
        term = total = 1  # C(n, 0)
        for i in range(k):
            term = term * (n - i) // (i + 1)
            total += term
        return min(1.0, 2 * total / 2**n)  # int / int: correctly rounded
    from scipy.special import bdtr

    return min(1.0, 2.0 * float(bdtr(k, n, 0.5)))


def binomial_greater(successes: int, n: int, p: float) -> float:
    """One-sided exact binomial p-value that the rate exceeds ``p``."""
    if n == 0 or successes <= 0:
        return 1.0
    if successes > n:
        return 0.0
    if p >= 1.0:
        return 1.0
    if p <= 0.0:
        return 0.0
    if n <= EXACT_TAIL_MAX:  # P(X >= successes), each term in log space
        log_p, log_q, log_n = math.log(p), math.log1p(-p), math.lgamma(n + 1)
        terms = [
            math.exp(
                log_n - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q
            )
            for i in range(successes, n + 1)
        ]
        return min(1.0, math.fsum(terms))
    from scipy.special import bdtrc

    return float(bdtrc(successes - 1, n, p))


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
