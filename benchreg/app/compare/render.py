"""A comparison as tables: the headline (significant tasks first), every task's row, the gate,
and the markdown page. One colour meaning on every page: green = A better, red = B better
(significant after Holm); nothing else is coloured."""

from __future__ import annotations

from typing import Any

from benchreg.app.compare.gate import INCOMPLETE
from benchreg.app.compare.power import POWER
from benchreg.app.compare.results import Comparison, Gate, TaskComparison
from benchreg.core.reporting import Cell, Headline
from benchreg.core.summary import plural

A_BETTER, B_BETTER = "pass", "fail"  # the headline's tones: green and red
NBSP = "\u00a0"  # keeps a CI on one line when a narrow terminal wraps the cell
MDE_COLUMN = f"MDE ({POWER:.0%} power)"
COLOURS = (
    "Green: A better, red: B better (significant after Holm); uncoloured or grey: no "
    "significant difference."
)

HEADER = [
    "task",
    "view",
    "metric",
    "pairs",
    "mean A [95% CI]",
    "mean B [95% CI]",
    "A - B",
    "95% CI",
    "test",
    "p",
    "p (Holm)",
    "significant",
    MDE_COLUMN,
    "note",
]
GATE_HEADER = [
    "task",
    "view",
    "test",
    "pairs",
    "B - A",
    "p (one-sided)",
    "p (Holm)",
    "regression beyond margin",
    f"MDE one-sided ({POWER:.0%})",
    "underpowered",
    "note",
]

METHOD = (
    "Paired on sample id per task and view (pairs = n of each mean); mean A and mean B with "
    "their 95% CI (Wilson for 0/1 scores, else percentile bootstrap); difference = A - B of "
    "the primary metric's per-sample scores, paired bootstrap 95% CI ({n_boot} resamples); "
    "exact McNemar for 0/1 scores, else Wilcoxon signed-rank; Holm correction across the "
    "{tested} tested tasks at alpha = {alpha}. MDE: the smallest true |A - B| the two-sided test "
    "at alpha = {alpha} (before Holm) detects with 80% power at the task's n: from the observed "
    "discordant share for 0/1 scores (Connor 1987), else from the sd of the paired differences "
    "(paired t-test)."
)


def f4(x: float | None, sign: bool = False) -> str:
    return "" if x is None else f"{x:+.4f}" if sign else f"{x:.4f}"


def p_text(x: float | None) -> str:
    return "" if x is None else f"{x:.3g}"


def mean_text(x: float | None, ci: tuple[float, float] | None) -> str:
    """`0.7500 [0.4000, 0.9000]`: a side's mean over the pairs with its 95% CI."""
    if x is None:
        return ""
    return f"{x:.4f} [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else f"{x:.4f}"


def tested(result: Comparison) -> list[TaskComparison]:
    return [r for r in result.rows if r.p is not None]


def method(result: Comparison) -> str:
    return METHOD.format(n_boot=result.n_boot, tested=len(tested(result)), alpha=result.alpha)


def direction(row: TaskComparison) -> str | None:
    """The colour tone of a row: A better, B better, or None (not significant)."""
    if not row.significant:
        return None
    return A_BETTER if (row.difference or 0) > 0 else B_BETTER


def verdict(row: TaskComparison) -> str:
    if row.p is None:
        return ""
    tone = direction(row)
    return "no" if tone is None else "yes: A better" if tone == A_BETTER else "yes: B better"


def table_rows(result: Comparison) -> list[list[str]]:
    rows = []
    for r in result.rows:
        ci = f"[{r.ci95[0]:+.4f}, {r.ci95[1]:+.4f}]" if r.ci95 else ""
        rows.append(
            [
                r.task,
                r.view or "",
                r.metric,
                str(r.n_pairs),
                mean_text(r.mean_a, r.ci95_a),
                mean_text(r.mean_b, r.ci95_b),
                f4(r.difference, sign=True),
                ci,
                r.test,
                p_text(r.p),
                p_text(r.p_holm),
                verdict(r),
                f4(r.mde),
                r.note,
            ]
        )
    return rows


def summary_line(result: Comparison) -> str:
    sig = sum(r.significant for r in tested(result))
    return f"{sig} of {len(tested(result))} tasks differ significantly after Holm correction."


def _headline_row(r: TaskComparison) -> list[Any]:
    better = direction(r) == A_BETTER
    difference = (
        f"{r.difference:+.4f} [{r.ci95[0]:+.4f},{NBSP}{r.ci95[1]:+.4f}]"
        if r.difference is not None and r.ci95
        else ""
    )
    return [
        r.task,
        r.view or "",
        r.metric,
        r.n_pairs,
        mean_text(r.mean_a, r.ci95_a).replace(", ", f",{NBSP}"),
        mean_text(r.mean_b, r.ci95_b).replace(", ", f",{NBSP}"),
        difference,
        r.test,
        p_text(r.p_holm),
        f4(r.mde),
        Cell("A better" if better else "B better", A_BETTER if better else B_BETTER),
    ]


def headline(result: Comparison) -> Headline:
    """The answer first: every task whose difference holds after the Holm correction (A better
    or B better), with both means, the difference and its CI, the test, the corrected p and
    the MDE."""
    rows = [_headline_row(r) for r in tested(result) if r.significant]
    n_tested = len(tested(result))
    title = f"Tasks that differ significantly after Holm correction: {len(rows)} of {n_tested}"
    footnotes = [f"A: {result.a}", f"B: {result.b}", method(result), COLOURS]
    if not rows:
        footnotes.insert(0, "No task differs significantly: every tested task is listed below.")
    untested = len(result.rows) - n_tested
    if untested:
        footnotes.append(
            f"{plural(untested, 'task')} not tested (no per-sample scores, or no sample in "
            "common): listed below with a note."
        )
    columns = [*HEADER[:6], "A - B [95% CI]", "test", "p (Holm)", MDE_COLUMN, "which"]
    return Headline(title, columns, rows, footnotes)


def gate_rows(gate: Gate) -> list[list[str]]:
    return [
        [
            g.task,
            g.view or "",
            g.test,
            str(g.n_pairs),
            f4(g.b_minus_a, sign=True),
            p_text(g.p),
            p_text(g.p_holm),
            "yes" if g.regression else "no",
            f4(g.mde),
            "yes" if g.underpowered else "",
            g.note,
        ]
        for g in gate.rows
    ]


def gate_lines(gate: Gate) -> list[str]:
    """The decision in words: the verdict, the failing tasks, the underpowered ones."""
    shown = {g.label: g for g in gate.rows}
    lines = [f"Release gate (margin {gate.margin:g}, alpha {gate.alpha:g}): {gate.verdict}"]
    if gate.verdict == INCOMPLETE:
        lines.append(
            f"no decision: {plural(len(gate.untested), 'task')} of "
            f"{len(gate.untested) + len(gate.rows)} could not be gated (no per-sample scores); "
            "a GO needs every task tested"
        )
    if gate.failing:
        failing = ", ".join(
            f"{name} (B - A = {shown[name].b_minus_a:+.4f}, Holm p = {shown[name].p_holm:.3g})"
            for name in gate.failing
        )
        lines.append(f"B is worse than A by more than {gate.margin:g} on: {failing}")
    else:
        lines.append(f"no task shows B worse than A by more than {gate.margin:g}")
    if gate.underpowered:
        lines.append(
            f"underpowered (could not show a regression of {gate.margin:g} at their n): "
            + ", ".join(gate.underpowered)
        )
    if gate.untested:
        lines.append("not gated (no per-sample scores): " + ", ".join(gate.untested))
    return lines
