"""Loader for a MolP2S release: `data/<directory>/<view>.jsonl` + `<view>.labels.jsonl`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError, at
from benchreg.core.io import confined
from benchreg.core.load import LoadPlan, gc_paused, load
from benchreg.core.params import loader_params
from benchreg.core.reader import index_lines
from benchreg.core.types import Dataset, LoadContext, Sample
from benchreg.families.molp2s.chem_checks import masked_smiles_problem, smiles_parses
from benchreg.families.molp2s.records import (
    STRUCTURE_ONLY,
    TASK_FIELDS,
    TaskLine,
    label_lines,
    task_lines,
)

LOADED = "molp2s.samples"  # the loading door's name of this loader's rows
ROWS_FORMAT = 1  # part of the cache key: raise it when a row's contents change

Row = tuple[str, dict[str, Any], int, dict[str, Any]]  # a sample's (id, input, gold, meta)


@registry.loaders.register("molp2s")
@loader_params(check_smiles=bool)
def load_molp2s(ctx: LoadContext) -> Dataset:
    if len(ctx.data) != 1:
        raise BenchregError(
            f"task {ctx.task_name} must name exactly one data directory (got {len(ctx.data)})"
        )
    directory = ctx.data[0]
    view = ctx.view or "correct"
    file_view = "correct" if view == STRUCTURE_ONLY else view
    tasks_path = confined(directory / f"{file_view}.jsonl", ctx.data_root, what="view file")
    labels_path = confined(directory / f"{file_view}.labels.jsonl", ctx.data_root, what="view file")
    check_smiles = bool(ctx.params.get("check_smiles", True))
    plan = LoadPlan(
        name=LOADED,
        files=(tasks_path, labels_path),
        read=lambda: read_rows(tasks_path, labels_path, view, directory.name, check_smiles),
        key={
            "view": view,
            "directory": directory.name,
            "check_smiles": check_smiles,
            "rows": ROWS_FORMAT,
        },
    )
    loaded = load(plan, cache=ctx.cache)
    checks = "off"
    if check_smiles:
        checks = "checked" if loaded.source == "read" else "cached"
    with gc_paused():
        samples = [Sample(*row) for row in loaded.value]
    return Dataset(
        samples=samples,
        files=[tasks_path, labels_path],
        info={"view": view, "loaded": loaded.source, "smiles_checks": checks},
    )


def read_rows(
    tasks_path: Path, labels_path: Path, view: str, directory: str, check_smiles: bool
) -> list[Row]:
    """Every sample's row, in the task file's order, once every rule holds; else the first
    problem, located: the task lines (JSON, ids, then the :class:`TaskLine` rules), RDKit's
    checks of their SMILES, the label lines, one label per record, labels within the
    candidates."""
    task_found = index_lines(tasks_path, "record_id", what="task line")
    numbers = [number for number, _ in task_found.values()]
    tasks = task_lines([value for _, value in task_found.values()], tasks_path, numbers)
    if check_smiles:
        _check_all_smiles(tasks, numbers, tasks_path)
    label_found = index_lines(labels_path, "record_id", what="label line")
    labels = label_lines(
        [value for _, value in label_found.values()],
        labels_path,
        [number for number, _ in label_found.values()],
    )
    if task_found.keys() != label_found.keys():
        _report_unmatched(task_found, tasks_path, label_found, labels_path)
    label_of = dict(zip(label_found, [label["label"] for label in labels], strict=True))
    rows = []
    for task, number in zip(tasks, numbers, strict=True):
        rid, n = task["record_id"], len(task["candidate_completed_smiles"])
        label = label_of[rid]
        if not 0 <= label < n:
            raise BenchregError(
                f"label {label} of record {rid!r} is outside its {n} candidates",
                where=at(labels_path, label_found[rid][0]),
                fix="labels are 0-based indices into candidate_completed_smiles",
            )
        rows.append(_row(task, label, view, directory, number))
    return rows


Found = dict[str, tuple[int, Any]]  # record_id -> (line number, decoded line)


def _report_unmatched(
    task_found: Found, tasks_path: Path, label_found: Found, labels_path: Path
) -> None:
    """Raise for the first record without a label, else for the first label of no record."""
    missing = [rid for rid in task_found if rid not in label_found]
    if missing:
        raise BenchregError(
            f"{len(missing)} record(s) have no label, first {missing[0]!r} "
            f"(at {at(tasks_path, task_found[missing[0]][0])})",
            where=labels_path,
            fix="every record_id of the task file needs one label line",
        )
    extra = [rid for rid in label_found if rid not in task_found]
    raise BenchregError(
        f"label for unknown record {extra[0]!r} ({len(extra)} extra label(s))",
        where=at(labels_path, label_found[extra[0]][0]),
        fix=f"remove it or add the record to {tasks_path.name}",
    )


def _row(task: TaskLine, label: int, view: str, directory: str, line: int) -> Row:
    candidates = task["candidate_completed_smiles"]
    masked = task["masked_smiles"]
    scaffold = hashlib.sha1("\n".join((masked, *candidates)).encode("utf-8")).hexdigest()[:16]
    meta: dict[str, Any] = {
        "directory": directory,
        "view": view,
        "line": line,
        "n_candidates": len(candidates),
        "scaffold": scaffold,
    }
    if len(task) > len(TASK_FIELDS):
        meta["extra"] = {k: v for k, v in task.items() if k not in TASK_FIELDS}
    rid = task["record_id"]
    return (
        rid,
        {
            "record_id": rid,
            "masked_smiles": masked,
            "mask": task["mask"],
            "properties": {} if view == STRUCTURE_ONLY else task["properties"],
            "candidate_completed_smiles": candidates,
        },
        label,
        meta,
    )


def _check_all_smiles(tasks: list[TaskLine], numbers: list[int], path: Path) -> None:
    """RDKit's checks of every record; each distinct SMILES is parsed once, and when any check
    fails the records are checked in file order, so that the first problem is the one named."""
    if _all_pass(tasks):
        return
    for task, number in zip(tasks, numbers, strict=True):
        _check_smiles(task, at(path, number))


def _all_pass(tasks: list[TaskLine]) -> bool:
    """A masked SMILES with a dummy atom passes whatever its mask, any other is checked with its
    record's mask; every candidate must parse."""
    masked = {task["masked_smiles"] for task in tasks}
    marked = {smiles for smiles in masked if masked_smiles_problem(smiles, {}) is None}
    if len(marked) < len(masked) and any(
        masked_smiles_problem(task["masked_smiles"], task["mask"]) is not None
        for task in tasks
        if task["masked_smiles"] not in marked
    ):
        return False
    candidates: set[str] = set().union(*(task["candidate_completed_smiles"] for task in tasks))
    return all(smiles_parses(smiles) for smiles in candidates)


def _check_smiles(task: TaskLine, where: str) -> None:
    rid = task["record_id"]
    problem = masked_smiles_problem(task["masked_smiles"], task["mask"])
    if problem:
        raise BenchregError(f"record {rid!r}: {problem}", where=where)
    for index, smiles in enumerate(task["candidate_completed_smiles"]):
        if not smiles_parses(smiles):
            raise BenchregError(
                f"record {rid!r}: candidate {index} {smiles!r} does not parse in RDKit",
                where=where,
            )
