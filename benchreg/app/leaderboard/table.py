"""The leaderboard's table: one row per model, one column per task, view, primary metric and
data (runs of one task and view on other data files never share a column), one cell per row and
column holding the newest run and how many older runs of the same model and data it hides."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from benchreg.app.leaderboard.records import Run
from benchreg.core.analysis import identity_labels, short_identity


@dataclass(frozen=True, slots=True, order=True)
class Column:
    task: str
    view: str
    metric: str
    data: str  # the data digest (:attr:`Run.data_digest`)

    @property
    def heading(self) -> str:
        view = f" [{self.view}]" if self.view else ""
        return f"{self.task}{view} {self.metric} @{self.data[:8]}"


@dataclass(slots=True)
class Cell:
    run: Run  # the newest finished run of the row's model on the column's data
    older: int = 0  # older runs of the same model and data, not shown
    p_holm: float | None = None  # set by `--ref`: Holm-adjusted p of the paired test
    difference: float | None = None  # mean(this row) - mean(reference) over the pairs
    significant: bool = False


@dataclass(slots=True)
class Row:
    group: str  # the model group (:attr:`JobRecord.group`): its identity
    label: str  # the display name, unique in the table
    short_id: str
    cells: dict[Column, Cell] = field(default_factory=dict)
    reference: bool = False


@dataclass(slots=True)
class Board:
    rows: list[Row]
    columns: list[Column]
    data_files: dict[str, dict[str, str]]  # data digest -> {file: sha256}
    data_roots: dict[str, list[str]]  # data digest -> the data roots its runs read
    ref: str | None = None  # the reference row's label, with `--ref`
    tests: int = 0  # paired tests Holm corrected over, with `--ref`
    untested: int = 0  # result cells with no test (no reference result in their column, ...)
    source: str = ""  # what was read, and how much of it is shown


def column_of(run: Run) -> Column:
    job = run.job
    return Column(job.task, job.view or "", str(job.metrics["primary"]), run.data_digest)


def newest_first(runs: Iterable[Run]) -> list[Run]:
    return sorted(runs, key=lambda r: (r.finished, r.finished_ns), reverse=True)


def names_of(run: Run) -> set[str]:
    """What names a run's model: its identity, display name or label."""
    job = run.job
    return {name for name in (job.model_id, job.model, job.label, job.group) if name}


def keep(runs: Sequence[Run], tasks: Sequence[str], models: Sequence[str]) -> list[Run]:
    """The runs whose task matches one of the ``tasks`` globs and whose model one of the
    ``models`` names or globs (no filter: every run)."""
    return [
        run
        for run in runs
        if (not tasks or any(_matches(run.job.task, glob) for glob in tasks))
        and (not models or any(_matches(n, pattern) for n in names_of(run) for pattern in models))
    ]


def _matches(name: str, pattern: str) -> bool:
    # the name itself first: shown names hold brackets (`results.json [0123abcd]`), which a
    # glob reads as a set of characters
    return name == pattern or fnmatchcase(name, pattern)


def build(runs: Sequence[Run]) -> Board:
    """The table of ``runs``: rows in label order, columns in task, view, metric, data order."""
    rows: dict[str, Row] = {}
    labels = identity_labels((r.job.label or r.job.model, r.job.group) for r in runs)
    data_files: dict[str, dict[str, str]] = {}
    data_roots: dict[str, list[str]] = {}
    for run in newest_first(runs):
        job = run.job
        row = rows.get(job.group)
        if row is None:
            label = labels[(job.label or job.model, job.group)]
            row = rows[job.group] = Row(job.group, label, short_identity(job.model_id))
        column = column_of(run)
        data_files.setdefault(column.data, dict(run.data))
        roots = data_roots.setdefault(column.data, [])
        if job.data_root not in roots:
            roots.append(job.data_root)
        if column in row.cells:
            row.cells[column].older += 1
        else:
            row.cells[column] = Cell(run)
    columns = sorted({c for row in rows.values() for c in row.cells})
    ordered = sorted(rows.values(), key=lambda r: (r.label.lower(), r.group))
    return Board(ordered, columns, data_files, data_roots)
