"""`python -m benchreg tasks`: every registered entry with its family, views and sample count.

The count is the number of samples of the entry's default view on the embedded sample data. An
entry that fails to load is listed as BROKEN with its one-line error; the listing never stops.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError

DESCRIPTION_WIDTH = 72


def describe(name: str, folders: Sequence[Path]) -> dict[str, Any]:
    """One entry's listing row; `status` is `ok` or `broken` (then `error` says why)."""
    from benchreg.core.pipeline import data_root_for, load_dataset
    from benchreg.core.task import load_task

    row: dict[str, Any] = {"name": name, "status": "ok", "error": None}
    try:
        task = load_task(name, folders)
    except Exception as exc:  # listed, never raised: one broken entry must not hide the others
        return {**row, "status": "broken", "error": one_line(exc)}
    row.update(
        family=task.family,
        description=task.description,
        views=list(task.views),
        default_view=task.default_view,
        aliases=list(task.aliases),
        samples=None,
        samples_error=None,
    )
    try:
        view = task.resolve_view(None)
        row["samples"] = len(load_dataset(task, view, data_root_for(task, {})).samples)
    except Exception as exc:  # e.g. a user entry whose data exists only under its own root
        row["samples_error"] = one_line(exc)
    return row


def list_entries(folders: Sequence[Path]) -> list[dict[str, Any]]:
    from benchreg.core.entries import list_tasks, task_folders

    extra = list(folders)
    return [describe(name, extra) for name in list_tasks(task_folders(extra))]


def one_line(exc: BaseException) -> str:
    text = exc.message if isinstance(exc, BenchregError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())


def render(rows: Sequence[dict[str, Any]]) -> str:
    header = ("task", "family", "samples", "views (* default)", "description")
    table = [header]
    for row in rows:
        if row["status"] != "ok":
            table.append((row["name"], "BROKEN", "", "", row["error"]))
            continue
        views = ", ".join(f"{v}*" if v == row["default_view"] else v for v in row["views"])
        samples = "-" if row["samples"] is None else str(row["samples"])
        table.append((row["name"], row["family"], samples, views or "-", _short(row)))
    widths = [max(len(line[i]) for line in table) for i in range(len(header) - 1)]
    lines = [
        "  ".join([*(cell.ljust(w) for cell, w in zip(line, widths, strict=False)), line[-1]])
        for line in table
    ]
    broken = sum(1 for row in rows if row["status"] != "ok")
    lines.append("")
    lines.append(f"{len(rows)} tasks, {broken} broken. Run one: python -m benchreg task=<task>")
    return "\n".join(lines)


def _short(row: dict[str, Any]) -> str:
    text = " ".join(str(row["description"]).split())
    return text if len(text) <= DESCRIPTION_WIDTH else text[: DESCRIPTION_WIDTH - 3] + "..."
