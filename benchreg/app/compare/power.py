"""The minimum detectable difference (MDE) of a paired comparison: the smallest true mean
difference its test finds with the given power (80%) at its alpha, at the task's n.

- 0/1 scores (McNemar): Connor's (1987) normal approximation with the observed discordant
  proportion psi held fixed. Its sample-size formula n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2
  / d^2 is solved for d in closed form (the larger root of a quadratic).
- Continuous scores (paired t): the exact power of the one-sample t-test on the differences
  (noncentral t) with their observed sd, solved for the mean difference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

POWER = 0.8


@dataclass(frozen=True)
class Detectable:
    """An MDE (None when it cannot be estimated, with the reason)."""

    mde: float | None
    reason: str = ""


def _z(q: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(q))


def mde_paired_binary(
    n: int, discordant: int, alpha: float, *, sides: int = 2, power: float = POWER
) -> Detectable:
    """MDE of a paired test of two 0/1 scores over ``n`` pairs of which ``discordant`` differ."""
    if discordant == 0:
        return Detectable(None, "no discordant pair: the MDE cannot be estimated")
    psi = discordant / n
    z_a, z_b = _z(1 - alpha / sides), _z(power)
    spread = n - z_a**2 + z_b**2
    if spread <= 0:
        return Detectable(None, f"n = {n} is too small for {power:.0%} power")
    mde = math.sqrt(psi) * (z_a * math.sqrt(n) + z_b * math.sqrt(spread)) / (n + z_b**2)
    if mde > psi:  # a mean difference cannot exceed the share of pairs that differ
        return Detectable(
            None, f"no difference has {power:.0%} power with {discordant} of {n} pairs discordant"
        )
    return Detectable(mde)


def paired_t_power(effect: float, n: int, alpha: float, *, sides: int = 2) -> float:
    """Power of the paired t-test at a standardised mean difference ``effect`` (= mean / sd)."""
    from scipy.stats import nct, t

    df, shift = n - 1, effect * math.sqrt(n)
    critical = float(t.ppf(1 - alpha / sides, df))
    upper = float(nct.sf(critical, df, shift))
    if sides == 1:
        return upper
    # P(T < -c) as the upper tail of the mirrored shift: scipy's nct.cdf is NaN far in that tail
    return upper + float(np.nan_to_num(nct.sf(critical, df, -shift)))


def mde_paired_t(
    n: int, sd: float, alpha: float, *, sides: int = 2, power: float = POWER
) -> Detectable:
    """MDE of the paired t-test over ``n`` differences of standard deviation ``sd``."""
    from scipy.optimize import brentq

    if n < 2:
        return Detectable(None, "fewer than 2 pairs: the MDE cannot be estimated")
    if sd <= 0:
        return Detectable(None, "the paired differences do not vary: the MDE cannot be estimated")
    high = 1.0
    while paired_t_power(high, n, alpha, sides=sides) < power and high < 1e6:
        high *= 2
    effect = brentq(lambda e: paired_t_power(e, n, alpha, sides=sides) - power, 0.0, high)
    return Detectable(float(effect) * sd)
