"""The leaderboard as text: the terminal table, leaderboard.md, leaderboard.csv and the
self-contained leaderboard.html. A cell shows a number only for a result (value, 95% CI,
n/denominator); any other run is shown by its state in words."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass

from benchreg.app.leaderboard.table import Board, Cell, Column, Row
from benchreg.app.report import html as page_html
from benchreg.core.summary import ND_SHORT, RESULT, plural, support

MARKER = "benchreg leaderboard"  # in every file written, so only a leaderboard is overwritten
HIGHER, LOWER = "▲", "▼"
CSV_COLUMNS = (
    "model",
    "model_id",
    "task",
    "view",
    "metric",
    "data_digest",
    "state",
    "value",
    "ci95_lo",
    "ci95_hi",
    "n",
    "denominator",
    "older_runs",
    "finished",
    "run_folder",
    "vs_reference",
    "p_holm",
    "why",
)


def cell_text(cell: Cell | None) -> str:
    """`0.2500 [0.1119, 0.4687] 20/20 (+1 older) ▲`, or the state in words."""
    if cell is None:
        return "-"
    run = cell.run
    if run.state == RESULT:
        metric = run.primary
        low, high = metric["ci95"]
        nd = support(run.job.metrics, metric).text
        text = f"{metric['value']:.4f} [{low:.4f}, {high:.4f}] {nd}"
    else:
        text = run.state
    if cell.older:
        text += f" (+{cell.older} older)"
    if cell.significant:
        text += f" {HIGHER if (cell.difference or 0) > 0 else LOWER}"
    return text


@dataclass(frozen=True, slots=True)
class Layout:
    """The table as text, made once for the terminal, the markdown and the page."""

    header: list[str]
    body: list[list[str]]
    notes: list[str]
    names: list[str]  # each row's model in one cell, for the narrow terminal table


def layout(board: Board) -> Layout:
    return Layout(header(board), body(board), footnotes(board), [name(r) for r in board.rows])


def name(row: Row) -> str:
    """`results.json [0123abcd] (id predictions:sha256=0123456789ab)`: the label, with the
    short id beside it when that says more."""
    shown = row.label if row.short_id == row.label else f"{row.label} (id {row.short_id})"
    return f"{shown} (reference)" if row.reference else shown


def header(board: Board) -> list[str]:
    return ["model", "model id", *(column.heading for column in board.columns)]


def body(board: Board) -> list[list[str]]:
    return [
        [
            f"{row.label} (reference)" if row.reference else row.label,
            row.short_id,
            *(cell_text(row.cells.get(c)) for c in board.columns),
        ]
        for row in board.rows
    ]


def footnotes(board: Board) -> list[str]:
    """What the reader needs beside the table: the data of each column, the meaning of the
    marks and of n/denominator, and why each run that is no result is not one."""
    notes = [board.source] if board.source else []
    notes += [
        "Cells: the primary metric of the newest finished run, [95% CI], n/denominator "
        f"({ND_SHORT}); (+k older): earlier runs of the same model on the same data, not shown."
    ]
    if board.ref is not None:
        notes.append(_reference_note(board))
    for digest, files in sorted(board.data_files.items()):
        listed = ", ".join(f"{name} ({sha[:12]})" for name, sha in sorted(files.items()))
        roots = ", ".join(board.data_roots.get(digest) or []) or "not recorded"
        notes.append(f"data @{digest[:8]}: {listed or 'no data file recorded'} (root: {roots})")
    for row in board.rows:
        for column in board.columns:
            cell = row.cells.get(column)
            if cell is not None and cell.run.state != RESULT:
                notes.append(
                    f"{row.label}, {column.heading}: {cell.run.state}: {cell.run.why} "
                    f"({cell.run.job.dir})"
                )
    return notes


def _reference_note(board: Board) -> str:
    untested = (
        f"; {plural(board.untested, 'other result cell')} not tested (no reference result in "
        "their column, or no paired per-sample scores)"
        if board.untested
        else ""
    )
    return (
        f"{HIGHER}/{LOWER}: higher/lower than the reference {board.ref}, paired on sample id "
        "(exact McNemar for 0/1 scores, else Wilcoxon signed-rank), Holm-corrected across the "
        f"{plural(board.tests, 'test')} of the table, p < 0.05{untested}."
    )


def terminal(shown: Layout, width: int) -> str:
    """The table in blocks of columns that fit ``width`` characters (each block starts with
    the models), then the footnotes."""
    rows = [
        ["model", *shown.header[2:]],
        *([name, *cells[2:]] for name, cells in zip(shown.names, shown.body, strict=True)),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    blocks: list[list[int]] = []
    used = width  # a full block: the first column opens a block
    for i in range(1, len(widths)):
        if used + 2 + widths[i] > width:
            blocks.append([0])
            used = widths[0]
        blocks[-1].append(i)
        used += 2 + widths[i]
    lines: list[str] = []
    for block in blocks or [[0]]:
        if lines:
            lines.append("")
        lines += _aligned(rows, [(i, widths[i]) for i in block])
    return "\n".join(lines + [f"  {note}" for note in shown.notes])


def _aligned(rows: Sequence[Sequence[str]], columns: Sequence[tuple[int, int]]) -> list[str]:
    lines = ["  ".join(row[i].ljust(w) for i, w in columns).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for _, w in columns))
    return lines


def markdown(shown: Layout) -> str:
    table = page_html.markdown_table(shown.header, shown.body)
    notes = "\n".join(f"- {note}" for note in shown.notes)
    return f"<!-- {MARKER} -->\n# Leaderboard\n\n{table}\n\n{notes}\n"


def html(shown: Layout) -> str:
    notes = "".join(f"<li>{page_html.prose(note)}</li>" for note in shown.notes)
    parts = [
        f"<!-- {MARKER} -->",
        page_html.table(shown.header, shown.body, cls="wide"),
        f'<ul class="footnotes">{notes}</ul>',
    ]
    return page_html.page("Leaderboard", parts)


def csv_text(board: Board) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in board.rows:
        for column in board.columns:
            cell = row.cells.get(column)
            if cell is not None:
                writer.writerow(_csv_row(board, row, column, cell))
    return buffer.getvalue()


def _csv_row(board: Board, row: Row, column: Column, cell: Cell) -> Sequence[object]:
    run = cell.run
    result = run.state == RESULT
    metric = run.primary
    nd = support(run.job.metrics, metric)
    low, high = metric["ci95"] if result else (None, None)
    versus = "" if board.ref is None or cell.p_holm is None else _versus(cell)
    return (
        row.label,
        run.job.model_id,
        column.task,
        column.view,
        column.metric,
        column.data,
        run.state,
        metric["value"] if result else "",
        "" if low is None else low,
        "" if high is None else high,
        nd.n if result and nd.n is not None else "",
        nd.denominator if result and nd.denominator is not None else "",
        cell.older,
        run.finished,
        str(run.job.dir),
        "reference" if row.reference else versus,
        "" if cell.p_holm is None else f"{cell.p_holm:.4g}",
        run.why,
    )


def _versus(cell: Cell) -> str:
    if not cell.significant:
        return "no difference shown"
    return "higher" if (cell.difference or 0) > 0 else "lower"
