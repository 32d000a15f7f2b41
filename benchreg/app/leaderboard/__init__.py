"""`python -m benchreg leaderboard FOLDER... [--out DIR] [--task GLOB] [--model NAME]
[--ref MODEL]`: one table of every finished run under the folders (single runs and sweep jobs,
any date, any depth): a row per model identity, a column per task, view, primary metric and data
files, each cell the newest run's value with its 95% CI and n/denominator, or its state in words
when it is no result (incomplete, not a benchmark result, demonstration data, not testable).

Modules, one concern each: :mod:`.discover` (where the runs are), :mod:`.records` (one run
folder read and judged), :mod:`.table` (rows, columns, the newest run per cell), :mod:`.reference`
(`--ref`: paired tests, Holm across the table), :mod:`.render` (terminal, markdown, CSV, HTML) and
:mod:`.output` (the three files, never over a file that is not a leaderboard)."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from benchreg.app.leaderboard import output, reference, render
from benchreg.app.leaderboard.discover import FOLDER_HINT, check_folders, run_folders
from benchreg.app.leaderboard.records import Run, Skipped, read_run
from benchreg.app.leaderboard.table import Board, build, keep
from benchreg.core.errors import BenchregError
from benchreg.core.summary import plural

# the width when the output is no terminal (a file, a pipe): $COLUMNS, else this
TERMINAL_FALLBACK = (160, 24)


def run(args: argparse.Namespace) -> int:
    """Read, build, check, then write: bad input is one error line before anything is
    written; a damaged run folder is one warning line and the rest is used."""
    folders: list[Path] = list(args.folders)
    check_folders(folders)
    targets = output.check_targets(args.out if args.out is not None else Path.cwd())
    failed: list[str] = []
    found = run_folders(folders, failed)
    runs = read_runs(found, warn)
    where = ", ".join(str(f) for f in folders)
    if not runs:
        raise BenchregError(
            f"no finished run (no folder with a readable metrics.json) under {where}",
            fix=FOLDER_HINT,
        )
    board = board_of(runs, args.task, args.model)
    board.source = _source(where, len(found), len(runs), board)
    if failed:
        board.source += f"; {plural(len(set(failed)), 'failed run')} (error.json) not shown"
    if args.ref is not None:
        reference.mark_differences(board, reference.reference_row(board, args.ref), warn)
    shown = render.layout(board)
    output.write(board, shown, targets)
    print(render.terminal(shown, shutil.get_terminal_size(TERMINAL_FALLBACK).columns))
    for path in targets:
        print(f"wrote {path}")
    return 0


def _source(where: str, found: int, read: int, board: Board) -> str:
    """`9 finished runs under results: 6 shown, 1 older run counted, 2 left out by the filters`."""
    cells = [cell for row in board.rows for cell in row.cells.values()]
    older = sum(cell.older for cell in cells)
    parts = [f"{len(cells)} shown"]
    if older:
        parts.append(f"{plural(older, 'older run')} counted")
    if read - len(cells) - older:
        parts.append(f"{read - len(cells) - older} left out by the filters")
    if found - read:
        parts.append(f"{found - read} skipped (damaged: see the warnings)")
    return f"{plural(found, 'finished run')} under {where}: {', '.join(parts)}"


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def read_runs(folders: Sequence[Path], on_skip: reference.Warn) -> list[Run]:
    """Every run of ``folders`` (a damaged one: ``on_skip`` its warning). One process: a pool
    measured slower (sending the records back costs more than the decoding it shares)."""
    from benchreg.core.load import gc_paused

    runs = []
    with gc_paused():  # decoded JSON holds no cycles; 10,000 records trigger full collections
        for folder in folders:
            read = read_run(folder)
            if isinstance(read, Skipped):
                on_skip(read.warning)
            else:
                runs.append(read)
    return runs


def board_of(runs: list[Run], tasks: Sequence[str], models: Sequence[str]) -> Board:
    kept = keep(runs, tasks, models)
    if not kept:
        asked = [f"--task {t}" for t in tasks] + [f"--model {m}" for m in models]
        raise BenchregError(
            f"no run of the {plural(len(runs), 'finished run')} matches {' '.join(asked)}",
            fix="check the task glob (e.g. '<family>/*') and the model name or id",
        )
    return build(kept)
