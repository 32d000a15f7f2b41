"""A PromptCBLUE structured gold file (`<split>_structured.json`, the results.json shape).

The file holds every task's gold: its decoded document is one value of the loading door
(:mod:`benchreg.core.load`), read once and kept for the next task of a sweep; each task checks
its own part.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError
from benchreg.core.load import LoadPlan, load
from benchreg.core.reader import read_json_strict
from benchreg.families.cblue.catalogue import TaskInfo

STRUCTURED = "cblue.structured"  # the loading door's name of a structured gold file's document
FORMAT = 1  # the value's shape: part of its key


def task_gold(path: Path, info: TaskInfo, *, cache: bool) -> dict[str, Any]:
    """``{sample_id: answer}`` of ``info``'s task in the gold file ``path``, checked."""
    plan = LoadPlan(
        STRUCTURED, (path,), partial(read_structured, path), {"format": FORMAT}, disk=False
    )
    return gold_of_task(load(plan, cache=cache).value, info, path)


def read_structured(path: Path) -> dict[str, Any]:
    data = read_json_strict(path)
    if not isinstance(data, dict):
        raise BenchregError("a structured gold file must map task names to lists", where=path)
    return data


def gold_of_task(data: dict[str, Any], info: TaskInfo, path: Path) -> dict[str, Any]:
    """``{sample_id: answer}`` of one task of a decoded gold file (empty when it lacks the
    task); a malformed entry is an error naming the sample."""
    present = [name for name in info.names if name in data]
    if not present:
        return {}
    if len(present) > 1:
        raise BenchregError(
            f"gold file names task {info.name} twice ({' and '.join(present)})",
            where=path,
            fix="keep one of the two keys",
        )
    entries = data[present[0]]
    if not isinstance(entries, list):
        raise BenchregError(f"gold of task {present[0]} must be a list", where=path)
    gold: dict[str, Any] = {}
    for index, entry in enumerate(entries):
        if not (isinstance(entry, dict) and isinstance(entry.get("sample_id"), str)):
            raise BenchregError(
                f"gold entry {index} of task {present[0]} lacks a string sample_id", where=path
            )
        if "answer" not in entry:
            raise BenchregError(
                f"gold entry {entry['sample_id']} of task {present[0]} has no answer", where=path
            )
        problem = _gold_problem(info, entry["answer"])
        if problem:
            raise BenchregError(
                f"gold of {entry['sample_id']} ({present[0]}): {problem}",
                where=path,
                fix="fix the gold file; it must be in the results.json shape",
            )
        gold[entry["sample_id"]] = entry["answer"]
    return gold


def _gold_problem(info: TaskInfo, answer: Any) -> str | None:
    if info.kind == "extraction":
        if not isinstance(answer, list) or not all(isinstance(i, dict) for i in answer):
            return "must be a list of objects"
    elif info.kind in ("classification", "reply"):
        if not isinstance(answer, str):
            return "must be a string"
    elif not (isinstance(answer, dict) and all(isinstance(v, str) for v in answer.values())):
        return "must be an object of string sections"
    return None
