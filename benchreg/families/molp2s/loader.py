"""Loader for a MolP2S release: `data/<directory>/<view>.jsonl` + `<view>.labels.jsonl`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchreg.core import registry
from benchreg.core.errors import BenchregError, at
from benchreg.core.io import iter_jsonl
from benchreg.core.types import Dataset, LoadContext, Sample
from benchreg.families.molp2s.chem_checks import masked_smiles_problem, smiles_parses
from benchreg.families.molp2s.records import STRUCTURE_ONLY, LabelLine, TaskLine


@registry.loaders.register("molp2s")
def load_molp2s(ctx: LoadContext) -> Dataset:
    if len(ctx.data) != 1:
        raise BenchregError(
            f"task {ctx.task_name} must name exactly one data directory (got {len(ctx.data)})"
        )
    directory = ctx.data[0]
    view = ctx.view or "correct"
    file_view = "correct" if view == STRUCTURE_ONLY else view
    tasks_path = directory / f"{file_view}.jsonl"
    labels_path = directory / f"{file_view}.labels.jsonl"
    check_smiles = bool(ctx.params.get("check_smiles", True))
    lines = _read_tasks(tasks_path, check_smiles)
    labels = _read_labels(labels_path)
    missing = [rid for rid in lines if rid not in labels]
    if missing:
        raise BenchregError(
            f"{len(missing)} record(s) have no label, first {missing[0]!r} "
            f"(line {lines[missing[0]][0]} of {tasks_path.name})",
            where=labels_path,
            fix="every record_id of the task file needs one label line",
        )
    extra = [rid for rid in labels if rid not in lines]
    if extra:
        raise BenchregError(
            f"label for unknown record {extra[0]!r} ({len(extra)} extra label(s))",
            where=at(labels_path, labels[extra[0]][0]),
            fix=f"remove it or add the record to {tasks_path.name}",
        )
    samples = []
    for rid, (line_no, task) in lines.items():
        label_line, label = labels[rid]
        n = len(task.candidate_completed_smiles)
        if not 0 <= label < n:
            raise BenchregError(
                f"label {label} of record {rid!r} is outside its {n} candidates",
                where=at(labels_path, label_line),
                fix="labels are 0-based indices into candidate_completed_smiles",
            )
        samples.append(_sample(task, label, view, directory.name, line_no))
    return Dataset(samples=samples, files=[tasks_path, labels_path], info={"view": view})


def _sample(task: TaskLine, label: int, view: str, directory: str, line_no: int) -> Sample:
    structure_only = view == STRUCTURE_ONLY
    candidates = list(task.candidate_completed_smiles)
    scaffold = hashlib.sha1(
        "\n".join([task.masked_smiles, *candidates]).encode("utf-8")
    ).hexdigest()[:16]
    extra = dict(task.model_extra or {})
    return Sample(
        id=task.record_id,
        input={
            "record_id": task.record_id,
            "masked_smiles": task.masked_smiles,
            "mask": task.mask,
            "properties": {} if structure_only else task.properties,
            "candidate_completed_smiles": candidates,
        },
        gold=label,
        meta={
            "directory": directory,
            "view": view,
            "line": line_no,
            "n_candidates": len(candidates),
            "scaffold": scaffold,
            **({"extra": extra} if extra else {}),
        },
    )


def _read_tasks(path: Path, check_smiles: bool) -> dict[str, tuple[int, TaskLine]]:
    lines: dict[str, tuple[int, TaskLine]] = {}
    for number, obj in iter_jsonl(path):
        task = _validate(TaskLine, obj, path, number)
        if task.record_id in lines:
            first = lines[task.record_id][0]
            raise BenchregError(
                f"duplicate record_id {task.record_id!r} (first at line {first})",
                where=at(path, number),
            )
        if check_smiles:
            _check_smiles(task, path, number)
        lines[task.record_id] = (number, task)
    return lines


def _read_labels(path: Path) -> dict[str, tuple[int, int]]:
    labels: dict[str, tuple[int, int]] = {}
    for number, obj in iter_jsonl(path):
        label = _validate(LabelLine, obj, path, number)
        if label.record_id in labels:
            raise BenchregError(
                f"duplicate label for record_id {label.record_id!r} "
                f"(first at line {labels[label.record_id][0]})",
                where=at(path, number),
            )
        labels[label.record_id] = (number, label.label)
    return labels


def _validate(model: Any, obj: Any, path: Path, number: int) -> Any:
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "line"
        raise BenchregError(
            f"{field}: {error['msg']}",
            where=at(path, number),
            fix=f"expected fields: {', '.join(model.model_fields)}",
        ) from None


def _check_smiles(task: TaskLine, path: Path, number: int) -> None:
    problem = masked_smiles_problem(task.masked_smiles, task.mask)
    if problem:
        raise BenchregError(f"record {task.record_id!r}: {problem}", where=at(path, number))
    for index, smiles in enumerate(task.candidate_completed_smiles):
        if not smiles_parses(smiles):
            raise BenchregError(
                f"record {task.record_id!r}: candidate {index} {smiles!r} does not parse in RDKit",
                where=at(path, number),
            )
