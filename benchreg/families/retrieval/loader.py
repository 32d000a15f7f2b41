"""Loader `retrieval`: the entries of one modality and split from `sets/*.jsonl`, checked
against `corpus/manifest.jsonl`.

The view is the split (`dev` by default). The `test` split is frozen (`frozen_views` in the task
entries' base): the core reads it only in a final run (``run.final=true``) and otherwise stops
before the loader opens any file.
Entries that break a rule of spec 004 are void: dropped, each named in a warning and in the
`retrieval_sets` validator's findings (``void_entries: error`` stops the run instead).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.io import sha256_file
from benchreg.core.params import loader_params
from benchreg.core.reader import Record, read_records
from benchreg.core.types import Dataset, LoadContext, Sample
from benchreg.families.retrieval.manifest import read_manifest
from benchreg.families.retrieval.records import SPLITS
from benchreg.families.retrieval.regions import MODALITIES
from benchreg.families.retrieval.validators import Located, check_entries, unanswerable_shares

SETS = "sets"


def _selected(record: Record, modality: str, split: str) -> bool:
    data = record.data
    if not isinstance(data, dict):
        return True  # reported as a malformed entry
    other_splits = set(SPLITS) - {split}
    record_modality = data.get("modality")
    mine = record_modality == modality or record_modality not in MODALITIES
    return mine and data.get("split") not in other_splits


def sample_of(located: Located) -> Sample:
    entry = located.entry
    gold = [{"source_id": g.source_id, "region": dict(g.region)} for g in entry.gold]
    return Sample(
        id=entry.query_id,
        input={
            "query_id": entry.query_id,
            "question": entry.question,
            "modality": entry.modality,
            "scope": entry.scope.model_dump(),
            "as_of": entry.as_of,
            "answer_format": entry.answer_format,
        },
        gold=gold,
        meta={
            "modality": entry.modality,
            "split": entry.split,
            "as_of": entry.as_of,
            "holder": entry.scope.holder,
            "session": entry.scope.session,
            "scenario": entry.scope.scenario,
            "unanswerable": entry.unanswerable,
            "answer": entry.answer,
            "origin": entry.origin.model_dump(),
            "where": located.where,
        },
    )


@registry.loaders.register("retrieval")
@loader_params(modality=str, void_entries=Literal["drop", "error"])
def load_retrieval(ctx: LoadContext) -> Dataset:
    modality = str(ctx.params.get("modality", ""))
    if modality not in MODALITIES:
        raise BenchregError(
            f"task {ctx.task_name}: loader param `modality` must be one of {list(MODALITIES)}"
        )
    split = ctx.view or "dev"
    manifest = read_manifest(ctx.data_root)
    set_files = sorted((ctx.data_root / SETS).glob("*.jsonl"))
    if not set_files:
        raise BenchregError(
            "no set files", where=ctx.data_root / SETS, fix="put the entries in sets/*.jsonl"
        )
    records = [
        r for path in set_files for r in read_records(path) if _selected(r, modality, split)
    ]
    valid, void = check_entries(records, manifest)
    if void and ctx.params.get("void_entries", "drop") == "error":
        raise BenchregError(
            f"{len(void)} entr(y/ies) break spec 004, first: {void[0]}",
            fix="run mode=validate for the full list",
        )
    return Dataset(
        samples=[sample_of(located) for located in valid],
        files=[manifest.path, *set_files],
        warnings=[f"void entry {f}" for f in void],
        info={
            "modality": modality,
            "split": split,
            "manifest": manifest.rows,
            "manifest_obj": manifest,
            "void": void,
            "unanswerable": unanswerable_shares(located.entry for located in valid),
            "sha256": _hashes(ctx.data_root, manifest.path, set_files),
        },
    )


def _hashes(root: Path, manifest: Path, set_files: list[Path]) -> dict[str, Any]:
    return {
        "manifest": sha256_file(manifest),
        "sets": {str(p.relative_to(root)): sha256_file(p) for p in set_files},
    }
