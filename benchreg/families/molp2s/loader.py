"""Loader for a MolP2S release: `data/<directory>/<view>.jsonl` + `<view>.labels.jsonl`."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from loguru import logger
from pydantic import BaseModel, ValidationError

from benchreg.core import checkcache, fastjson, partload, registry
from benchreg.core.errors import BenchregError, at
from benchreg.core.io import confined, sha256_file
from benchreg.core.params import loader_params
from benchreg.core.reader import gc_paused, index_lines
from benchreg.core.types import Dataset, LoadContext, samples_of_rows
from benchreg.families.molp2s.chem_checks import masked_smiles_problem, smiles_parses
from benchreg.families.molp2s.records import STRUCTURE_ONLY, LabelLine, TaskLine

M = TypeVar("M", bound=BaseModel)


@registry.loaders.register("molp2s")
@loader_params(check_smiles=bool)
def load_molp2s(ctx: LoadContext) -> Dataset:
    with gc_paused():  # 100k records: no collector passes over the growing heap while loading
        return _load_molp2s(ctx)


def _load_molp2s(ctx: LoadContext) -> Dataset:
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
    files = [tasks_path, labels_path]
    cache_params = {"view": view, "directory": directory.name, "check_smiles": check_smiles}
    rows = checkcache.loaded(LOADED, files, cache_params)
    if rows is not None:
        logger.info(
            f"{tasks_path.name}: samples (and their checks) reused from an earlier run on this "
            f"exact file (sha256 {sha256_file(tasks_path)[:12]}, cache {checkcache.cache_dir()})"
        )
        return Dataset(
            samples=samples_of_rows(rows),
            files=files,
            info={"view": view, "smiles_checks": "cached" if check_smiles else "off"},
        )

    parted = _loaded_in_parts(files, cache_params, view, directory.name, check_smiles)
    if parted is not None:
        rows, validation, processes = parted
        return Dataset(
            samples=samples_of_rows(rows),
            files=files,
            info={"view": view, "smiles_checks": validation, "read_by": {"processes": processes}},
        )
    task_lines = index_lines(tasks_path, "record_id", what="task line")
    tasks = {
        rid: _task(obj) or _task_from_model(obj, at(tasks_path, number))
        for rid, (number, obj) in task_lines.items()
    }
    validation = "off"
    if check_smiles:
        validation = _checked_smiles(tasks, task_lines, tasks_path)
    label_lines = index_lines(labels_path, "record_id", what="label line")
    labels = {rid: _label(obj, labels_path, number) for rid, (number, obj) in label_lines.items()}

    if tasks.keys() != labels.keys():  # one C-level comparison of the two id sets
        _report_unmatched(tasks, task_lines, tasks_path, labels, label_lines, labels_path)
    rows = _rows(tasks, task_lines, labels, label_lines, labels_path, view, directory.name)
    # Only the rows hold the decoded values now: marshal looks up every object held more than
    # once in its table of back-references, so dumping them is about twice as fast.
    del task_lines, tasks, label_lines, labels
    # Decoded by the core reader's fast path, whose key cache makes equal keys one object.
    # Sharing the equal values too (checkcache.shared_strings) would make the entry about 20%
    # smaller and its read-back about 25% faster, but costs the first run a walk over every
    # value (measured at 100,000 records: 0.8 s of CPU to save 0.08 s per repeated run; making
    # only the equal properties one object, by their orjson dump, cost 0.6 s to save 0.15 s).
    # The inputs stay encoded in a repeated run until something reads them (defer_inputs).
    checkcache.store_loaded(
        LOADED, files, rows, cache_params, strings_shared=True, defer_inputs=True
    )
    return Dataset(
        samples=samples_of_rows(rows),
        files=files,
        info={"view": view, "smiles_checks": validation},
    )


LOADED = "molp2s.samples"  # the loaded-data cache's name of this loader's samples


def _loaded_in_parts(
    files: list[Path],
    cache_params: dict[str, Any],
    view: str,
    directory: str,
    check_smiles: bool,
) -> tuple[list[Any], str, int] | None:
    """The rows of a large task file read in parts by this process and forked copies at once
    (core.partload), each part checked as the one-process read checks it, and stored in the
    loaded-data cache; what was done about the SMILES checks; how many processes read it. None
    when one process reads it (a small file, copies not safe), or when any part holds anything
    but plain lines that pass: the one-process read then names the problem as it always does.

    Each process decodes its part's task lines and the whole label file (4 MB at 100,000
    records), checks its part's records (RDKit included) and builds their rows; what spans the
    parts is checked here: record ids distinct across parts, and as many labels as records
    (each part found a label for each of its records)."""
    tasks_path, labels_path = files
    if not labels_path.is_file() or partload.worker_count(tasks_path) < 1:
        return None
    smiles = check_smiles and not checkcache.validated(SMILES_CHECK, [tasks_path])
    labels_seen: list[int] = []

    def rows_of(start: int, end: int) -> list[Any] | None:
        labels = _plain_labels(labels_path)
        if labels is None:
            return None
        labels_seen.append(len(labels))
        return _part_rows(tasks_path, start, end, labels, smiles, view, directory)

    with partload.lines_loaded_in_parts(
        tasks_path, rows_of, strings_shared=True, defer_inputs=True
    ) as parts:
        if parts is None:
            return None
        rows = parts.own + parts.theirs
        ids = {row[0] for row in parts.own}
        ids.update(row[0] for row in parts.theirs)
        if len(ids) != len(rows) or labels_seen != [len(rows)]:
            return None  # an id in two parts, or a label of no record
        checkcache.store_loaded(
            LOADED,
            files,
            parts.own,
            cache_params,
            strings_shared=True,
            defer_inputs=True,
            then=parts.rows_files,
        )
    processes = len(parts.rows_files) + 1
    logger.info(f"{tasks_path.name}: {len(rows):,} records read by {processes} processes")
    if smiles:
        checkcache.mark_validated(SMILES_CHECK, [tasks_path])
    return rows, "checked" if smiles else ("cached" if check_smiles else "off"), processes


def _plain_labels(path: Path) -> dict[str, int] | None:
    """The labels of a label file whose every line is plainly valid, else None."""
    lines = fastjson.json_lines(path)
    if lines is None:
        return None
    labels: dict[str, int] = {}
    for _, obj in lines:
        if type(obj) is not dict:
            return None
        rid, label = obj.get("record_id"), obj.get("label")
        if type(rid) is not str or not rid or type(label) is not int or rid in labels:
            return None
        labels[rid] = label
    return labels


def _part_rows(
    path: Path,
    start: int,
    end: int,
    labels: dict[str, int],
    smiles: bool,
    view: str,
    directory: str,
) -> list[Any] | None:
    """The rows of the task lines in bytes ``[start, end)``, when every line plainly passes
    (:func:`_task`), ids distinct, each with a label within its candidates and, with
    ``smiles``, every SMILES passing RDKit's checks; else None."""
    lines = fastjson.json_lines_between(path, start, end)
    if lines is None:
        return None
    tasks: dict[str, tuple[int, _Task]] = {}
    for number, obj in lines:
        task = _task(obj) if type(obj) is dict else None
        if task is None or task.record_id in tasks:
            return None
        tasks[task.record_id] = (number, task)
    if smiles and not _all_pass([task for _, task in tasks.values()]):
        return None
    rows = []
    for rid, (number, task) in tasks.items():
        label = labels.get(rid)
        if label is None or not 0 <= label < len(task.candidates):
            return None
        rows.append(_row(task, label, view, directory, number))
    return rows


Lines = dict[str, tuple[int, Any]]  # record_id -> (line number, decoded line)


def _report_unmatched(
    tasks: dict[str, _Task],
    task_lines: Lines,
    tasks_path: Path,
    labels: dict[str, int],
    label_lines: Lines,
    labels_path: Path,
) -> None:
    """Raise for the first record without a label, else for the first label of no record."""
    missing = [rid for rid in tasks if rid not in labels]
    if missing:
        raise BenchregError(
            f"{len(missing)} record(s) have no label, first {missing[0]!r} "
            f"(at {at(tasks_path, task_lines[missing[0]][0])})",
            where=labels_path,
            fix="every record_id of the task file needs one label line",
        )
    extra = [rid for rid in labels if rid not in tasks]
    if extra:
        raise BenchregError(
            f"label for unknown record {extra[0]!r} ({len(extra)} extra label(s))",
            where=at(labels_path, label_lines[extra[0]][0]),
            fix=f"remove it or add the record to {tasks_path.name}",
        )


def _rows(
    tasks: dict[str, _Task],
    task_lines: Lines,
    labels: dict[str, int],
    label_lines: Lines,
    labels_path: Path,
    view: str,
    directory: str,
) -> list[tuple[str, dict[str, Any], int, dict[str, Any]]]:
    """The rows of every record, in file order; the first label outside its record's
    candidates is an error."""
    rows = []
    for rid, task in tasks.items():
        label, n = labels[rid], len(task.candidates)
        if not 0 <= label < n:
            raise BenchregError(
                f"label {label} of record {rid!r} is outside its {n} candidates",
                where=at(labels_path, label_lines[rid][0]),
                fix="labels are 0-based indices into candidate_completed_smiles",
            )
        rows.append(_row(task, label, view, directory, task_lines[rid][0]))
    return rows


class _Task(NamedTuple):
    """A task line that passed the :class:`TaskLine` rules (its values, not copied)."""

    record_id: str
    masked_smiles: str
    mask: dict[str, Any]
    properties: dict[str, Any]
    candidates: list[str]
    extra: dict[str, Any]


_FIELDS = frozenset(TaskLine.model_fields)


def _task(obj: dict[str, Any]) -> _Task | None:
    """The task line's values when they plainly pass :class:`TaskLine` (what a decoded JSON
    line that validates holds), else None: pydantic then validates it and names the problem."""
    rid, masked, mask = obj.get("record_id"), obj.get("masked_smiles"), obj.get("mask")
    properties, candidates = obj.get("properties"), obj.get("candidate_completed_smiles")
    if type(mask) is str:
        mask = {"token": mask}  # the model's shorthand
    if not (
        type(rid) is str
        and rid
        and type(masked) is str
        and masked
        and type(mask) is dict
        and type(properties) is dict
        and type(candidates) is list
        and candidates
        and all(type(c) is str for c in candidates)
    ):
        return None
    extra = {k: v for k, v in obj.items() if k not in _FIELDS} if len(obj) > 5 else {}
    return _Task(rid, masked, mask, properties, candidates, extra)


def _task_from_model(obj: dict[str, Any], where: str) -> _Task:
    task = _validate(TaskLine, obj, where)  # raises for a line _task does not take
    return _Task(
        task.record_id,
        task.masked_smiles,
        task.mask,
        task.properties,
        list(task.candidate_completed_smiles),
        dict(task.model_extra or {}),
    )


def _label(obj: dict[str, Any], path: Path, line: int) -> int:
    label = obj.get("label")
    return label if type(label) is int else _validate(LabelLine, obj, at(path, line)).label


def _row(
    task: _Task, label: int, view: str, directory: str, line: int
) -> tuple[str, dict[str, Any], int, dict[str, Any]]:
    """A sample as the row ``(id, input, gold, meta)`` the loaded-data cache keeps."""
    candidates = task.candidates
    scaffold = hashlib.sha1(
        "\n".join((task.masked_smiles, *candidates)).encode("utf-8")
    ).hexdigest()[:16]
    meta = {
        "directory": directory,
        "view": view,
        "line": line,
        "n_candidates": len(candidates),
        "scaffold": scaffold,
    }
    if task.extra:
        meta["extra"] = task.extra
    return (
        task.record_id,
        {
            "record_id": task.record_id,
            "masked_smiles": task.masked_smiles,
            "mask": task.mask,
            "properties": {} if view == STRUCTURE_ONLY else task.properties,
            "candidate_completed_smiles": candidates,
        },
        label,
        meta,
    )


def _validate(model: type[M], data: dict[str, Any], where: str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "line"
        raise BenchregError(
            f"{field}: {error['msg']}",
            where=where,
            fix=f"expected fields: {', '.join(model.model_fields)}",
        ) from None


SMILES_CHECK = "molp2s.smiles"  # the validation cache's name of the RDKit checks below


def _checked_smiles(tasks: dict[str, _Task], lines: dict[str, tuple[int, Any]], path: Path) -> str:
    """Run the RDKit checks of every record, unless they passed before on this exact file
    (same sha256, same benchreg version: see core.checkcache). Returns what was done."""
    if checkcache.validated(SMILES_CHECK, [path]):
        logger.info(
            f"{path.name}: RDKit SMILES checks skipped, they passed before on this file "
            f"(sha256 {sha256_file(path)[:12]}, validation cache {checkcache.cache_dir()})"
        )
        return "cached"
    if not _all_pass(list(tasks.values())):
        for rid, task in tasks.items():  # the first problem in file order
            _check_smiles(task, at(path, lines[rid][0]))
    checkcache.mark_validated(SMILES_CHECK, [path])
    return "checked"


def _all_pass(tasks: Collection[_Task]) -> bool:
    """Whether every record passes :func:`_check_smiles`, each distinct SMILES checked once (a
    masked SMILES with a dummy atom passes whatever its mask; any other is checked with its
    record's mask)."""
    masked = {task.masked_smiles for task in tasks}
    marked = {smiles for smiles in masked if masked_smiles_problem(smiles, {}) is None}
    if len(marked) < len(masked) and any(
        masked_smiles_problem(task.masked_smiles, task.mask) is not None
        for task in tasks
        if task.masked_smiles not in marked
    ):
        return False
    candidates: set[str] = set().union(*(task.candidates for task in tasks))
    return all(smiles_parses(smiles) for smiles in candidates)


def _check_smiles(task: _Task, where: str) -> None:
    problem = masked_smiles_problem(task.masked_smiles, task.mask)
    if problem:
        raise BenchregError(f"record {task.record_id!r}: {problem}", where=where)
    for index, smiles in enumerate(task.candidates):
        if not smiles_parses(smiles):
            raise BenchregError(
                f"record {task.record_id!r}: candidate {index} {smiles!r} does not parse in RDKit",
                where=where,
            )
