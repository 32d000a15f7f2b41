from __future__ import annotations

import pytest

from benchreg.core.stats import (
    binomial_greater,
    bootstrap_mean_ci,
    mcnemar_exact,
    wilcoxon_signed_rank,
    wilson_ci,
)


def test_wilson_known_value() -> None:
    # Wilson interval for 3/10 (Newcombe 1998 style check): [0.1078, 0.6032]
    lo, hi = wilson_ci(3, 10)
    assert lo == pytest.approx(0.10779, abs=1e-4)
    assert hi == pytest.approx(0.60322, abs=1e-4)
    assert wilson_ci(0, 0) == (0.0, 1.0)


def test_mcnemar_exact() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    # all 6 discordant pairs one way: two-sided p = 2 * 0.5**6
    assert mcnemar_exact(6, 0) == pytest.approx(2 * 0.5**6)


def test_binomial_greater() -> None:
    assert binomial_greater(10, 10, 0.25) == pytest.approx(0.25**10)


def test_bootstrap_mean_ci_brackets_mean() -> None:
    lo, hi = bootstrap_mean_ci([0.0, 0.5, 1.0, 0.25, 0.75] * 4, n_boot=500, seed=1)
    assert lo < 0.5 < hi


def test_wilcoxon_all_zero_is_one() -> None:
    assert wilcoxon_signed_rank([0.0, 0.0]) == 1.0
    assert wilcoxon_signed_rank([0.5] * 12) < 0.01


def test_exact_binomial_tests_agree_with_scipy_binomtest() -> None:
    from scipy.stats import binomtest

    cases = [(0, 0), (6, 0), (3, 3), (5, 2), (0, 1), (100, 37), (999, 1001), (1200, 790)]
    for b, c in [*cases, (1500, 1400), (40, 2)]:  # 2,900 trials: past the summed tails
        want = binomtest(min(b, c), b + c, 0.5).pvalue if b + c else 1.0
        assert mcnemar_exact(b, c) == pytest.approx(want, rel=1e-10)
    for k, n, p in [
        (10, 10, 0.25),
        (0, 5, 0.3),
        (3, 10, 0.2),
        (10, 10, 1.0),
        (7, 40, 0.1),
        (11, 12, 0.5),
        (120, 400, 0.25),
        (1, 1999, 0.001),
        (900, 2000, 0.5),
        (260, 2500, 0.1),
        (5, 3, 0.5),
    ]:
        want = binomtest(k, n, p, alternative="greater").pvalue if k <= n else 0.0
        assert binomial_greater(k, n, p) == pytest.approx(want, rel=1e-10)
