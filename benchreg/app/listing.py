"""`python -m benchreg tasks`: every registered entry with its family, views and description.

Each entry is composed and validated against the task spec (:mod:`benchreg.core.entries`),
which imports no family. With ``check``, each is also bound (every component it names looked up,
which imports every family) and its sample count is the number of samples of its default view
on the embedded sample data. An entry that fails is listed as BROKEN with its one-line error;
the listing never stops.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError

DESCRIPTION_WIDTH = 72
CHECK_HINT = "tasks --check also binds each entry and counts its samples"


def describe(name: str, folders: Sequence[Path], *, check: bool = False) -> dict[str, Any]:
    """One entry's listing row (``folders``: the user's, as for
    :func:`~benchreg.core.task.load_task`); `status` is `ok` or `broken` (then `error` says
    why)."""
    from benchreg.core.entries import load_spec

    row: dict[str, Any] = {"name": name, "status": "ok", "error": None}
    try:
        spec, _, _ = load_spec(name, folders)
    except Exception as exc:  # listed, never raised: one broken entry must not hide the others
        return {**row, "status": "broken", "error": one_line(exc)}
    row.update(
        family=spec.family,
        description=spec.description,
        views=list(spec.views),
        default_view=spec.default_view,
        aliases=list(spec.aliases),
    )
    return _checked(row, folders) if check else row


def _checked(row: dict[str, Any], folders: Sequence[Path]) -> dict[str, Any]:
    """``row`` of an entry that is also bound, with its sample count on the embedded sample."""
    from benchreg.core.pipeline import data_root_for, load_dataset
    from benchreg.core.task import load_task

    try:
        task = load_task(row["name"], folders)
    except Exception as exc:  # e.g. a component name that nothing registers
        return {**row, "status": "broken", "error": one_line(exc)}
    row.update(samples=None, samples_error=None)
    try:
        view = task.resolve_view(None)
        row["samples"] = len(load_dataset(task, view, data_root_for(task, {})).samples)
    except Exception as exc:  # e.g. a user entry whose data exists only under its own root
        row["samples_error"] = one_line(exc)
    return row


def list_entries(folders: Sequence[Path], *, check: bool = False) -> list[dict[str, Any]]:
    from benchreg.core.entries import list_tasks, task_folders

    return [describe(name, folders, check=check) for name in list_tasks(task_folders(folders))]


def one_line(exc: BaseException) -> str:
    text = exc.message if isinstance(exc, BenchregError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())


def render(rows: Sequence[dict[str, Any]]) -> str:
    """A table: task, family, (with --check) samples, views, description; BROKEN rows give
    their error in the description's place."""
    counted = any("samples" in row for row in rows)
    header = ("task", "family", *(("samples",) if counted else ()), "views (* default)")
    table = [(*header, "description")]
    for row in rows:
        if row["status"] != "ok":
            table.append((row["name"], "BROKEN", *[""] * (len(header) - 2), row["error"]))
            continue
        views = ", ".join(f"{v}*" if v == row["default_view"] else v for v in row["views"])
        samples = () if not counted else ("-" if row["samples"] is None else str(row["samples"]),)
        table.append((row["name"], row["family"], *samples, views or "-", _short(row)))
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [
        "  ".join([*(cell.ljust(w) for cell, w in zip(line, widths, strict=False)), line[-1]])
        for line in table
    ]
    broken = sum(1 for row in rows if row["status"] != "ok")
    hint = "" if counted else f"; {CHECK_HINT}"
    lines.append("")
    lines.append(
        f"{len(rows)} tasks, {broken} broken. Run one: python -m benchreg task=<task>{hint}"
    )
    return "\n".join(lines)


def _short(row: dict[str, Any]) -> str:
    text = " ".join(str(row["description"]).split())
    return text if len(text) <= DESCRIPTION_WIDTH else text[: DESCRIPTION_WIDTH - 3] + "..."
