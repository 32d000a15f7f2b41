"""A PromptCBLUE split file (`<split>.json`, JSON Lines) as rows grouped by task.

The file holds every task, and a sweep loads it for each of its 16 tasks: its rows are one
value of the loading door (:mod:`benchreg.core.load`), read once and kept for the next job.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

from benchreg.core.load import LoadPlan, load
from benchreg.core.reader import json_lines
from benchreg.families.cblue.catalogue import TaskInfo, lookup
from benchreg.families.cblue.records import checked_lines

# A row of one task: (line number, sample_id, input, target, answer_choices, task_type).
Row = tuple[int, str, str, str, list[str] | None, str | None]
ROWS_FORMAT = 1  # the shape of Row: part of the cached value's key
SPLIT = "cblue.split"  # the loading door's name of a split file's rows


def task_rows(split_file: Path, info: TaskInfo, *, cache: bool) -> list[Row]:
    """The rows of ``info``'s task in ``split_file`` (lines of another name of it included)."""
    plan = LoadPlan(
        SPLIT, (split_file,), partial(rows_by_task, split_file), {"rows": ROWS_FORMAT}, disk=False
    )
    rows: dict[str, list[Row]] = load(plan, cache=cache).value
    return rows.get(info.name, [])


def rows_by_task(path: Path) -> dict[str, list[Row]]:
    """Every line of ``path`` checked (:class:`~benchreg.families.cblue.records.SplitLine`),
    those of the 16 tasks kept as rows, by task (CMeIE-V2 as CMeIE)."""
    by_task: dict[str, list[Row]] = {}
    # A task's lines repeat the same answer_choices (CHIP-CTC: 44 labels on every line): its
    # rows share one list of each, a third of the rows' memory otherwise. Rows are never changed.
    shared: dict[tuple[str, ...], list[str]] = {}
    intern = sys.intern
    lines = ((number, value) for number, value, _ in json_lines(path))
    for number, line in checked_lines(lines, path):
        info = lookup(line["task_dataset"])
        if info is None:  # a task outside the 16 (Text2DT, CMedCausal)
            continue
        choices = line.get("answer_choices")
        if choices is not None:
            choices = shared.setdefault(tuple(choices), choices)
        task_type = line.get("task_type")
        row = (
            number,
            line["sample_id"],
            line["input"],
            line["target"],
            choices,
            intern(task_type) if task_type is not None else None,
        )
        by_task.setdefault(info.name, []).append(row)
    return by_task
