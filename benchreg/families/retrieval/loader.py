"""Loader `retrieval`: the entries of one modality and split from `sets/*.jsonl`, checked
against `corpus/manifest.jsonl`.

The view is the split (`dev` by default). The `test` split is frozen (`frozen_views` in the task
entries' base): the core reads it only in a final run (``run.final=true``) and otherwise stops
before the loader opens any file.
Entries that break a rule of spec 004 are void: dropped, each named in a warning and in the
`retrieval_sets` validator's findings (``void_entries: error`` stops the run instead).

Params: `modality`; `sets` (set file stems to read, e.g. ``[swebench_lite]``; default every
`sets/*.jsonl`): entries of one modality from two datasets (SWE-bench Lite and CodeSearchNet are
both `code`) are refused unless `sets` names the one to score, since their numbers would mix two
benchmarks; `void_entries`; `max_void_share` (default 0.10) and `allow_void` (default false):
more void entries than that share, or any entry void for `no corpus for its source`, stop the
run with one line (:func:`void_stop`: the void entries counted by reason, the first named);
`allow_void: true` runs anyway and marks every output "not a benchmark result".

The checked entries (valid ones as sample rows, void ones' findings) are loaded through the
loading door (`benchreg.core.load`): a run on set files read before answers from its
loaded-data cache without checking 100,000 entries again; `Dataset.info["loaded"]` (and
`"entries"`) say whether the entries were read and checked, or came from the cache or this
process's memory.

Nothing outside the data root is opened: `sets/`, every set file and the manifest are resolved
with :func:`benchreg.core.io.confined` (links and `..` followed, then checked) before they are
read or hashed. Entries whose gold comes from a synthetic annotation (the embedded sample) are
marked `demonstration` in their metadata, counted in the data set's info, and announced with a
warning: "demonstration data, not a benchmark".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.io import confined, sha256_file
from benchreg.core.load import LoadPlan, gc_paused, load
from benchreg.core.params import loader_params
from benchreg.core.reader import Record, read_records
from benchreg.core.types import Dataset, LoadContext, Sample
from benchreg.core.validation import Finding
from benchreg.families.retrieval.annotations import ANNOTATIONS, DEMONSTRATION
from benchreg.families.retrieval.manifest import Manifest, read_manifest
from benchreg.families.retrieval.records import SPLITS
from benchreg.families.retrieval.regions import MODALITIES
from benchreg.families.retrieval.validators import (
    NO_CORPUS,
    Located,
    check_entries,
    unanswerable_shares,
    void_by_entry,
    void_line,
)

SETS = "sets"
PLAN = "retrieval.entries"  # the door's name for the checked entries of the set files
ROWS_FORMAT = 3  # raise when sample_row, the rows or the checks change: older cache unused
VOID_SHARE = 0.10  # more void entries than this share stop the run (loader param max_void_share)
NOT_A_RESULT = "not a benchmark result"
HOW = {  # Dataset.info["entries"], by where the door found the checked entries
    "read": "read and checked",
    "cache": "reused from an earlier run's checks (same sha256)",
    "memory": "reused from this process's earlier load (same files)",
}


def _selected(record: Record, modality: str, split: str) -> bool:
    data = record.data
    if not isinstance(data, dict):
        return True  # reported as a malformed entry
    other_splits = set(SPLITS) - {split}
    record_modality = data.get("modality")
    mine = record_modality == modality or record_modality not in MODALITIES
    return mine and data.get("split") not in other_splits


def sample_of(located: Located) -> Sample:
    return Sample(*sample_row(located))


def sample_row(located: Located) -> tuple[Any, ...]:
    """The fields of the entry's :class:`Sample` (``id, input, gold, meta``) as plain data, for
    the loaded-data cache. The nested models are copied from their fields (``__dict__``): what
    ``model_dump()`` gives for these flat models (tests/families/retrieval/
    test_records_property.py holds them equal), without its cost per call."""
    entry = located.entry
    # the region copied: a sample holding the model's own dict would keep the memory the
    # validation allocated around it from being reused (a larger peak later in the run)
    gold = [{"source_id": g.source_id, "region": dict(g.region)} for g in entry.gold]
    scope, origin = entry.scope, entry.origin
    query_id, modality, as_of = entry.query_id, entry.modality, entry.as_of
    sample_input = {
        "query_id": query_id,
        "question": entry.question,
        "modality": modality,
        "scope": dict(scope.__dict__),
        "as_of": as_of,
        "answer_format": entry.answer_format,
    }
    meta = {
        "modality": modality,
        "split": entry.split,
        "as_of": as_of,
        "holder": scope.holder,
        "session": scope.session,
        "scenario": scope.scenario,
        "unanswerable": entry.unanswerable,
        "answer": entry.answer,
        "origin": dict(origin.__dict__),
        "where": located.where,
        "demonstration": located.demonstration,
    }
    return query_id, sample_input, gold, meta


def set_files(data_root: Path, names: list[str] | None) -> list[Path]:
    """The set files to read (all of `sets/*.jsonl`, or the named stems), each confined."""
    folder = confined(Path(SETS), data_root, what="sets folder")
    if names is not None:
        files = [folder / f"{name}.jsonl" for name in names]
        missing = [f for f in files if not f.is_file()]
        if missing:
            raise BenchregError(
                "set file not found",
                where=missing[0],
                fix=f"loader param `sets` names stems of sets/*.jsonl; found: "
                f"{sorted(p.stem for p in folder.glob('*.jsonl'))}",
            )
    else:
        files = sorted(folder.glob("*.jsonl"))
    return [confined(f.relative_to(data_root), data_root, what="set file") for f in files]


@registry.loaders.register("retrieval")
@loader_params(
    modality=str,
    void_entries=Literal["drop", "error"],
    sets=list,
    allow_void=bool,
    max_void_share=float,
)
def load_retrieval(ctx: LoadContext) -> Dataset:
    modality = str(ctx.params.get("modality", ""))
    if modality not in MODALITIES:
        raise BenchregError(
            f"task {ctx.task_name}: loader param `modality` must be one of {list(MODALITIES)}"
        )
    split = ctx.view or "dev"
    names = ctx.params.get("sets")
    files = set_files(ctx.data_root, [str(n) for n in names] if names is not None else None)
    manifest = read_manifest(ctx.data_root)
    if not files:
        raise BenchregError(
            "no set files", where=ctx.data_root / SETS, fix="put the entries in sets/*.jsonl"
        )
    plan = LoadPlan(
        name=PLAN,
        files=(manifest.path, *files),
        read=lambda: _check_here(files, manifest, modality, split, names).rows(),
        key=_key(modality, split, names),
    )
    loaded = load(plan, cache=ctx.cache)
    checked = _Checked.of_rows(loaded.value)
    with gc_paused():
        samples = [Sample(*row) for row in checked.samples]
    void, demo = checked.void, checked.demo
    if void and ctx.params.get("void_entries", "drop") == "error":
        raise BenchregError(
            f"{len(void)} entr(y/ies) break spec 004, first: {void[0]}",
            fix="run mode=validate for the full list",
        )
    not_a_result = void_stop(ctx.params, void, len(samples))
    warnings = [f"void entry {f}" for f in void]
    if not_a_result:
        warnings.append(f"{NOT_A_RESULT}: {not_a_result}")
    if demo:
        warnings.append(
            f"{DEMONSTRATION}: {demo} of {len(samples)} {modality} entries have gold written by "
            "this project (synthetic annotation); the gate verdicts below are no result"
        )
    return Dataset(
        samples=samples,
        files=[manifest.path, *_holding(files, samples)],
        warnings=warnings,
        info={
            "modality": modality,
            "split": split,
            "manifest": manifest.rows,
            "manifest_obj": manifest,
            "void": void,
            "unanswerable": checked.unanswerable,
            "entries": HOW[loaded.source],
            "loaded": loaded.source,
            "demonstration_entries": demo,
            "data": DEMONSTRATION if demo else "third-party annotation",
            "sha256": _hashes(ctx.data_root, manifest.path, files),
            **({"benchmark_result": False, "not_a_result": not_a_result} if not_a_result else {}),
        },
    )


def void_stop(params: Mapping[str, Any], void: list[Finding], valid: int) -> str | None:
    """Stop (one line) where nothing can be scored: an entry whose dataset has no corpus in a
    modality that has one (``no corpus for its source``), or more than `max_void_share` (default
    :data:`VOID_SHARE`) of the entries void. With `allow_void: true` the run goes on and this
    returns the line (the note that marks every output "not a benchmark result"); None when
    the run is a result."""
    if not void:
        return None
    by_entry = void_by_entry(void)
    entries = valid + len(by_entry)
    share = float(params.get("max_void_share", VOID_SHARE))
    if not 0.0 <= share <= 1.0:
        raise BenchregError(f"loader param max_void_share={share} is not a share (0 to 1)")
    no_corpus = NO_CORPUS in by_entry.values()
    if not no_corpus and len(by_entry) <= share * entries:
        return None
    line = void_line(by_entry, entries)
    if params.get("allow_void", False):
        return line
    if no_corpus:
        fix = ("score that set in a data root holding its own corpus, or name another set: "
               "loader_params.sets=[...]")
    else:
        fix = f"more than {share:.0%} of the entries are void: fix or remove them"
    raise BenchregError(
        line,
        fix=f"{fix}; mode=validate loader_params.allow_void=true lists them all; "
        f"loader_params.allow_void=true runs anyway, every output marked '{NOT_A_RESULT}'",
    )


@dataclass
class _Checked:
    """The set files' entries after :func:`check_entries`: the valid ones as sample rows, the
    void ones' findings, the unanswerable shares and the count of demonstration entries."""

    samples: list[tuple[Any, ...]]
    void: list[Finding]
    unanswerable: dict[str, tuple[int, int]]
    demo: int

    def rows(self) -> list[Any]:
        """What the door keeps (plain data): a head row, then one row per sample."""
        head = {
            "void": [(f.where, f.message, f.severity) for f in self.void],
            "unanswerable": {m: list(v) for m, v in self.unanswerable.items()},
            "demo": self.demo,
        }
        return [head, *self.samples]

    @classmethod
    def of_rows(cls, rows: list[Any]) -> _Checked:
        head = rows[0]
        return cls(
            rows[1:],
            [Finding(*f) for f in head["void"]],
            {m: (int(v[0]), int(v[1])) for m, v in head["unanswerable"].items()},
            int(head["demo"]),
        )


def _check_here(
    files: list[Path], manifest: Manifest, modality: str, split: str, names: Any
) -> _Checked:
    """The set files' entries read and checked (the door's strict read: a located error for
    an unreadable line or for datasets mixed in one modality)."""
    records = [r for path in files for r in read_records(path) if _selected(r, modality, split)]
    if names is None and len(files) > 1:  # (one file holds what its author chose)
        _refuse_mixed(records, modality)
    valid, void = check_entries(records, manifest)
    return _Checked(
        [sample_row(located) for located in valid],
        void,
        unanswerable_shares(located.entry for located in valid),
        sum(1 for located in valid if located.demonstration),
    )


def _key(modality: str, split: str, names: Any) -> dict[str, Any]:
    """What besides the files' contents the checks depend on: the selection and the annotation
    registry (annotations.py; a plugin may register more)."""
    registered = sorted(repr(a) for a in ANNOTATIONS.values())
    return {
        "rows": ROWS_FORMAT,
        "modality": modality,
        "split": split,
        "sets": names,
        "annotations": registered,
    }


def _refuse_mixed(records: list[Record], modality: str) -> None:
    """Entries of the modality from set files of different datasets: refused (their numbers
    would mix two benchmarks); one file may hold what its author chose."""
    by_file: dict[str, set[str]] = {}
    for record in records:
        data = record.data
        if isinstance(data, dict) and data.get("modality") == modality:
            origin = data.get("origin")
            if isinstance(origin, dict) and isinstance(origin.get("dataset"), str):
                by_file.setdefault(record.where.rsplit(":", 1)[0], set()).add(origin["dataset"])
    datasets = set().union(*by_file.values()) if by_file else set()
    if len(by_file) > 1 and len(datasets) > 1:
        stems = sorted(Path(f).stem for f in by_file)
        raise BenchregError(
            f"the {modality} entries come from {len(datasets)} datasets in {len(stems)} set "
            f"files ({', '.join(sorted(datasets))}): their numbers would mix benchmarks",
            fix=f"name the set file to score: loader_params.sets=[{stems[0]}] (set files: "
            f"{', '.join(stems)})",
        )


def _holding(files: list[Path], samples: list[Sample]) -> list[Path]:
    """The set files that hold the run's entries (a modality's entries sit in the set file
    of their source, e.g. `sets/locomo.jsonl`): those are the data the run's numbers and its
    sha256 in metrics.json stand for; all of them when no entry was selected."""
    names = {Path(str(s.meta.get("where") or "").rsplit(":", 1)[0]).name for s in samples}
    held = [f for f in files if f.name in names]
    return held or files


def _hashes(root: Path, manifest: Path, set_files: list[Path]) -> dict[str, Any]:
    return {
        "manifest": sha256_file(manifest),
        "sets": {str(p.relative_to(root)): sha256_file(p) for p in set_files},
    }
