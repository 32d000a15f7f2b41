"""`--ref MODEL`: every cell that holds a result is tested against the reference model's cell of
the same column (paired on sample id, :func:`benchreg.app.compare.compare_jobs`: exact McNemar
for 0/1 scores, else Wilcoxon), and the p-values are Holm corrected across the whole table
(:func:`benchreg.app.compare.holm`). Only these cells read their samples.jsonl."""

from __future__ import annotations

from collections.abc import Callable

from benchreg.app.compare import ALPHA, compare_jobs, holm
from benchreg.app.leaderboard.table import Board, Cell, Row
from benchreg.core.errors import BenchregError
from benchreg.core.summary import RESULT

Warn = Callable[[str], None]
# compare_jobs also bootstraps the difference's CI, which the table does not show; the p-value
# (exact McNemar or Wilcoxon) does not depend on it, so a few resamples keep 10,000 cells fast
UNUSED_BOOTSTRAP = 100


def reference_row(board: Board, wanted: str) -> Row:
    """The row ``wanted`` names (its label, display name, identity or short id); none or
    several is bad input."""
    matching = [row for row in board.rows if wanted in _names(row)]
    choices = "; ".join(f"{row.label} ({row.short_id})" for row in board.rows)
    if not matching:
        raise BenchregError(
            f"--ref {wanted!r} names no model of the table", fix=f"choose one of: {choices}"
        )
    if len(matching) > 1:
        raise BenchregError(
            f"--ref {wanted!r} names {len(matching)} models",
            fix="name one by its model id: " + "; ".join(row.group for row in matching),
        )
    return matching[0]


def _names(row: Row) -> set[str]:
    names = {row.label, row.short_id, row.group}
    for cell in row.cells.values():
        job = cell.run.job
        names |= {n for n in (job.model, job.model_id, job.label) if n}
    return names


def mark_differences(board: Board, ref: Row, warn: Warn) -> None:
    """Test each result cell against ``ref``'s cell of its column and mark the cells whose
    Holm-adjusted p is below 0.05. A cell whose samples cannot be read is a warning, untested."""
    ref.reference = True
    board.ref = ref.label
    tested: list[Cell] = []
    pvalues: list[float] = []
    for column in board.columns:
        base = ref.cells.get(column)
        for row in board.rows:
            cell = row.cells.get(column)
            if row is ref or cell is None or cell.run.state != RESULT:
                continue
            if base is None or base.run.state != RESULT:
                board.untested += 1
                continue
            try:
                outcome = compare_jobs(cell.run.job, base.run.job, n_boot=UNUSED_BOOTSTRAP)
            except BenchregError as exc:
                warn(f"not tested against the reference: {exc.message}")
                board.untested += 1
                continue
            if outcome.p is None:  # no sample in common, or no per-sample scores
                board.untested += 1
                continue
            cell.difference = outcome.difference
            tested.append(cell)
            pvalues.append(outcome.p)
    for cell, adjusted in zip(tested, holm(pvalues), strict=True):
        cell.p_holm = adjusted
        cell.significant = adjusted < ALPHA
    board.tests = len(tested)
