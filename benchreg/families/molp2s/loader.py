"""Loader for a MolP2S release: `data/<directory>/<view>.jsonl` + `<view>.labels.jsonl`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TypeVar

from loguru import logger
from pydantic import BaseModel, ValidationError

from benchreg.core import checkcache, registry
from benchreg.core.errors import BenchregError
from benchreg.core.io import confined, sha256_file
from benchreg.core.params import loader_params
from benchreg.core.reader import Record, gc_paused, index_by_id, read_records
from benchreg.core.types import Dataset, LoadContext, Sample
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
            samples=[Sample(*row) for row in rows],
            files=files,
            info={"view": view, "smiles_checks": "cached" if check_smiles else "off"},
        )

    task_records = index_by_id(read_records(tasks_path), "record_id", what="task line")
    tasks = {rid: _validate(TaskLine, record) for rid, record in task_records.items()}
    validation = "off"
    if check_smiles:
        validation = _checked_smiles(tasks, task_records, tasks_path)
    label_records = index_by_id(read_records(labels_path), "record_id", what="label line")
    labels = {rid: _validate(LabelLine, record).label for rid, record in label_records.items()}

    missing = [rid for rid in tasks if rid not in labels]
    if missing:
        raise BenchregError(
            f"{len(missing)} record(s) have no label, first {missing[0]!r} "
            f"(at {task_records[missing[0]].where})",
            where=labels_path,
            fix="every record_id of the task file needs one label line",
        )
    extra = [rid for rid in labels if rid not in tasks]
    if extra:
        raise BenchregError(
            f"label for unknown record {extra[0]!r} ({len(extra)} extra label(s))",
            where=label_records[extra[0]].where,
            fix=f"remove it or add the record to {tasks_path.name}",
        )
    samples = []
    for rid, task in tasks.items():
        label, n = labels[rid], len(task.candidate_completed_smiles)
        if not 0 <= label < n:
            raise BenchregError(
                f"label {label} of record {rid!r} is outside its {n} candidates",
                where=label_records[rid].where,
                fix="labels are 0-based indices into candidate_completed_smiles",
            )
        samples.append(_sample(task, label, view, directory.name, task_records[rid].where))
    checkcache.store_loaded(
        LOADED, files, [(s.id, s.input, s.gold, s.meta) for s in samples], cache_params
    )
    return Dataset(samples=samples, files=files, info={"view": view, "smiles_checks": validation})


LOADED = "molp2s.samples"  # the loaded-data cache's name of this loader's samples


def _sample(task: TaskLine, label: int, view: str, directory: str, where: str) -> Sample:
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
            "line": int(where.rpartition(":")[2]),  # a JSON Lines record is at `file:line`
            "n_candidates": len(candidates),
            "scaffold": scaffold,
            **({"extra": extra} if extra else {}),
        },
    )


def _validate(model: type[M], record: Record) -> M:
    try:
        return model.model_validate(record.data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "line"
        raise BenchregError(
            f"{field}: {error['msg']}",
            where=record.where,
            fix=f"expected fields: {', '.join(model.model_fields)}",
        ) from None


SMILES_CHECK = "molp2s.smiles"  # the validation cache's name of the RDKit checks below


def _checked_smiles(
    tasks: dict[str, TaskLine], records: dict[str, Record], path: Path
) -> str:
    """Run the RDKit checks of every record, unless they passed before on this exact file
    (same sha256, same benchreg version: see core.checkcache). Returns what was done."""
    if checkcache.validated(SMILES_CHECK, [path]):
        logger.info(
            f"{path.name}: RDKit SMILES checks skipped, they passed before on this file "
            f"(sha256 {sha256_file(path)[:12]}, validation cache {checkcache.cache_dir()})"
        )
        return "cached"
    for rid, task in tasks.items():
        _check_smiles(task, records[rid].where)
    checkcache.mark_validated(SMILES_CHECK, [path])
    return "checked"


def _check_smiles(task: TaskLine, where: str) -> None:
    problem = masked_smiles_problem(task.masked_smiles, task.mask)
    if problem:
        raise BenchregError(f"record {task.record_id!r}: {problem}", where=where)
    for index, smiles in enumerate(task.candidate_completed_smiles):
        if not smiles_parses(smiles):
            raise BenchregError(
                f"record {task.record_id!r}: candidate {index} {smiles!r} does not parse in RDKit",
                where=where,
            )
