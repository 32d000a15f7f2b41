"""The release gate: on every task both sides ran, is B worse than A by more than the margin?

Each task gets a one-sided paired test of H1: mean(B - A) < -margin (:mod:`.regression_test`);
the p-values are Holm-corrected across the gated tasks. NO-GO when any task shows such a
regression (Holm p < alpha); else GO when every task both sides ran was gated, INCOMPLETE when
some could not be (no per-sample scores: a corpus-level F1, say), since a GO over the tasks that
happened to be testable would read as a decision about all of them. A task whose one-sided test
could not detect a difference of the margin with 80% power at its n (its MDE exceeds the margin,
or cannot be estimated) is listed as underpowered: there a GO means the data could not show a
regression of that size, not that there is none.
"""

from __future__ import annotations

import math

from benchreg.app.compare.power import POWER, mde_paired_binary, mde_paired_t
from benchreg.app.compare.regression_test import (
    PAIRED_T,
    TANGO,
    t_regression,
    tango_regression,
)
from benchreg.app.compare.results import Gate, GateTask, TaskComparison
from benchreg.app.compare.stats import holm
from benchreg.core.errors import BenchregError

GO, NO_GO, INCOMPLETE = "GO", "NO-GO", "INCOMPLETE"
GATE_METHOD = (
    "One-sided paired test per task of H1: mean(B - A) < -{margin:g} ({tango} for 0/1 "
    "scores, {t} otherwise), Holm correction across the {n} gated tasks at alpha = {alpha:g}: "
    "NO-GO when any task shows a regression beyond the margin. MDE: the smallest true "
    "difference the one-sided test detects with {power:.0%} power at its n; a task whose MDE "
    "exceeds the margin (or cannot be estimated) is underpowered."
)


def check_options(gate: bool, margin: float | None, alpha: float) -> None:
    """Refuse a gate without a usable margin, or an alpha outside (0, 1)."""
    if not (0 < alpha < 1):
        raise BenchregError(f"--alpha {alpha:g} is outside (0, 1)", fix="e.g. --alpha 0.05")
    if margin is not None and not gate:
        raise BenchregError("--margin is the release gate's margin", fix="add --gate")
    if not gate:
        return
    if margin is None:
        raise BenchregError(
            "--gate needs --margin M",
            fix="M in the primary metric's units: e.g. --margin 0.05 for 5 points of accuracy",
        )
    if not math.isfinite(margin) or margin < 0:
        raise BenchregError(
            f"--margin {margin:g} is not a margin",
            fix="a regression to tolerate, >= 0 in the primary metric's units: e.g. 0.05",
        )


def gate_task(row: TaskComparison, margin: float, alpha: float) -> GateTask:
    """The one-sided test of a tested row (one with pairs, a difference and a test)."""
    assert row.difference is not None
    b_minus_a = -row.difference
    if row.discordant is not None:
        a_only, b_only = row.discordant
        test, result = TANGO, tango_regression(a_only, b_only, row.n_pairs, margin)
        detectable = mde_paired_binary(row.n_pairs, a_only + b_only, alpha, sides=1)
    else:
        sd = row.sd_difference or 0.0
        test, result = PAIRED_T, t_regression(b_minus_a, sd, row.n_pairs, margin)
        detectable = mde_paired_t(row.n_pairs, sd, alpha, sides=1)
    gated = GateTask(row.task, row.view, test, row.n_pairs, b_minus_a, result.statistic, result.p)
    gated.mde = detectable.mde
    # for a GO's sake: a task that could not show a regression of the margin at its n (unset
    # below when it showed one all the same)
    gated.underpowered = detectable.mde is None or detectable.mde > margin
    gated.note = f"MDE: {detectable.reason}" if detectable.reason else ""
    return gated


def release_gate(rows: list[TaskComparison], margin: float, alpha: float) -> Gate:
    tested = [r for r in rows if r.p is not None and r.difference is not None]
    if not tested:
        raise BenchregError(
            "no task can be gated: none has per-sample scores on both sides",
            fix="gate on tasks whose primary metric is a mean of sample scores",
        )
    gated = [gate_task(r, margin, alpha) for r in tested]
    for row, adjusted in zip(gated, holm([g.p for g in gated]), strict=True):
        row.p_holm = adjusted
        row.regression = adjusted < alpha
        row.underpowered = row.underpowered and not row.regression
    method = GATE_METHOD.format(
        margin=margin, tango=TANGO, t=PAIRED_T, n=len(gated), alpha=alpha, power=POWER
    )
    failing = [g.label for g in gated if g.regression]
    untested = [r.label for r in rows if r.p is None or r.difference is None]
    return Gate(
        margin=margin,
        alpha=alpha,
        verdict=NO_GO if failing else INCOMPLETE if untested else GO,
        method=method,
        rows=gated,
        failing=failing,
        underpowered=[g.label for g in gated if g.underpowered],
        untested=untested,
    )
