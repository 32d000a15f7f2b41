"""One-sided paired tests that B is worse than A by more than a margin M: H0: mean(B - A) >= -M
against H1: mean(B - A) < -M. A small p shows a regression beyond the margin.

- 0/1 scores: Tango's (1998) score test for the difference of paired proportions with the null
  difference -M; the variance uses the cell probabilities re-estimated under H0 (restricted
  maximum likelihood). At M = 0 it is the uncorrected McNemar z-test.
- Continuous scores: the one-sided paired t-test of the differences B - A against -M.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

TANGO = "Tango score test (paired proportions), one-sided"
PAIRED_T = "paired t-test, one-sided"


@dataclass(frozen=True)
class OneSided:
    statistic: float | None
    p: float


def _normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def tango_regression(a_only: int, b_only: int, n: int, margin: float) -> OneSided:
    """``a_only``: pairs only A got right; ``b_only``: only B. Tests p_B - p_A < -margin."""
    if margin >= 1:
        return OneSided(None, 1.0)  # a difference of 0/1 scores is never below -1
    delta = -margin
    # restricted MLE of q_a, the probability of an A-only pair, under p_B - p_A = delta (Tango's
    # closed form): the larger root of 2n q^2 + quad_b q + quad_c = 0
    quad_b = -(a_only + b_only) + (2 * n - b_only + a_only) * delta
    quad_c = -a_only * delta * (1 - delta)
    root = (-quad_b + math.sqrt(max(0.0, quad_b**2 - 8 * n * quad_c))) / (4 * n)
    q_a = max(root, -delta)  # an A-only share below the margin would make q_b negative
    variance = n * (2 * q_a + delta * (1 - delta))
    excess = b_only - a_only - n * delta
    if variance <= 0:
        return OneSided(None, 1.0 if excess >= 0 else 0.0)
    z = excess / math.sqrt(variance)
    return OneSided(z, _normal_cdf(z))


def t_regression(mean_b_minus_a: float, sd: float, n: int, margin: float) -> OneSided:
    """One-sided paired t-test of mean(B - A) < -margin from the differences' mean, sd and n."""
    from scipy.stats import t

    if n < 2:
        return OneSided(None, 1.0)
    if sd <= 0:
        return OneSided(None, 0.0 if mean_b_minus_a < -margin else 1.0)
    statistic = (mean_b_minus_a + margin) / (sd / math.sqrt(n))
    return OneSided(statistic, float(t.cdf(statistic, n - 1)))
