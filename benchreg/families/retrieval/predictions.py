"""Reader `retrieval_run` for retrieval runs, in one of two formats.

- JSON Lines (`.jsonl`): one line per query, ``{"query_id", "results": [{source_id, region,
  score, observed_at, holder, atom_id}, ...], "latency_s"}``, results in rank order; or
  ``{"query_id", "output": "<model text>"}`` (parsed by the task's parser).
- A TREC run (any other suffix): ``qid Q0 docno rank score tag`` lines, plus an atoms JSON
  Lines file mapping each docno to ``{atom_id, source_id, region, observed_at, holder}``: the
  reader param `atoms`, else ``<run>.atoms.jsonl`` beside the run. As in trec_eval the rank
  column is ignored: results are ordered by score (descending), ties by docno (descending).
  The atoms file of `python -m benchreg.families.retrieval.export` is such a file; of each
  atom a result keeps `source_id, region, observed_at, holder, atom_id` (not its text).

A malformed line is counted and listed, the rest still read; a docno the atoms file lacks makes
that query's answer invalid. Conflicting repeated query ids are scored invalid.

Both are read as a stream, and results of the modality's common single-unit shape are kept in
columns (columns.py), not as a dict per result; `file:line` strings are made only for the
lines a message names.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from benchreg.core import registry
from benchreg.core.errors import BenchregError, at
from benchreg.core.predictions import PredictionCollector
from benchreg.core.reader import gc_paused, json_lines
from benchreg.core.types import Prediction, PredictionSet, Sample, Status
from benchreg.families.retrieval import jsonl_parts, trec
from benchreg.families.retrieval.columns import UNIT_KEY, JsonlColumns, LineRef, ResultColumns
from benchreg.families.retrieval.jsonl_stream import FallBack, stream_lines

RESULT_KEYS = ("source_id", "region", "observed_at", "holder", "atom_id")


def _modality(samples: Sequence[Sample]) -> str | None:
    """The samples' modality when it is one whose common results are kept in columns."""
    found = {s.meta.get("modality") for s in samples}
    if len(found) == 1:
        modality = found.pop()
        return modality if modality in UNIT_KEY else None
    return None


@registry.prediction_readers.register("retrieval_run")
def read_run(
    path: Path, samples: Sequence[Sample], task_name: str, atoms: str | None = None
) -> PredictionSet:
    modality = _modality(samples)
    with gc_paused():
        if path.suffix == ".jsonl":
            return _read_jsonl(path, samples, task_name, modality)
        atoms_path = Path(atoms) if atoms else path.with_name(path.name + ".atoms.jsonl")
        collector = PredictionCollector(
            path, samples, task=task_name, duplicates="conflicts_invalid"
        )
        _read_trec(path, atoms_path, collector, modality)
        prediction_set = collector.finish()
    prediction_set.files.append(atoms_path)  # hashed into provenance.json with the run
    return prediction_set


def _read_jsonl(
    path: Path, samples: Sequence[Sample], task_name: str, modality: str | None
) -> PredictionSet:
    collector = PredictionCollector(path, samples, task=task_name, duplicates="conflicts_invalid")
    columns = JsonlColumns(modality) if modality is not None else None
    try:
        with jsonl_parts.parts_read(path, modality) as parts:
            for part in parts:
                _add_part(collector, columns, path, part)
    except FallBack:  # an unusual file: the core reader's path, line by line, from the start
        collector = PredictionCollector(
            path, samples, task=task_name, duplicates="conflicts_invalid"
        )
        columns = JsonlColumns(modality) if modality is not None else None
        for number, obj, error in json_lines(path, lenient=True):
            if error is not None:
                collector.add_malformed(at(path, number))
                continue
            _add_line(collector, columns, path, number, obj, obj)
    if columns is not None:
        columns.run.finish()
    return collector.finish()


def _add_part(
    collector: PredictionCollector,
    columns: JsonlColumns | None,
    path: Path,
    part: jsonl_parts.Part,
) -> None:
    """The lines of one part of the run: read by a copy (see jsonl_parts), or here."""
    read = part.lines()
    if read is None or columns is None:
        for number, offset, length, obj in stream_lines(path, part.start, part.end):
            _add_line(collector, columns, path, number, obj, LineRef(path, offset, length))
        return
    block, lines = read
    run = columns.run
    base = run.extend(*block)
    with path.open("rb") as handle:
        for line in lines:
            number, offset, length = line[:3]
            ref = LineRef(path, offset, length)
            if len(line) == 3:  # not of the columns: this process decodes it as always
                handle.seek(offset)
                obj = orjson.loads(handle.read(length))
                _add_line(collector, columns, path, number, obj, ref)
                continue
            qid, latency, start, stop, keys = line[3:]
            held = ResultColumns(run, base + start, base + stop, keys)
            answer = {"results": held, "latency_s": latency}
            collector.add(
                qid, Prediction(qid, answer=answer, latency_s=latency), where=number, value=ref
            )


def _add_line(
    collector: PredictionCollector,
    columns: JsonlColumns | None,
    path: Path,
    number: int,
    obj: Any,
    value: Any,
) -> None:
    qid = obj.get("query_id") if type(obj) is dict else None
    if not isinstance(qid, str) or not qid:
        collector.add_malformed(at(path, number))
        return
    latency = jsonl_parts.latency_of(obj)
    if "results" in obj:
        results = obj["results"]
        held = columns.add(results) if columns is not None else None
        answer = {"results": held if held is not None else results, "latency_s": latency}
        prediction = Prediction(qid, answer=answer, latency_s=latency)
    elif isinstance(obj.get("output"), str):
        prediction = Prediction(qid, raw_text=obj["output"], latency_s=latency)
    else:
        prediction = Prediction(qid, status=Status.INVALID, detail="no `results`")
    collector.add(qid, prediction, where=number, value=value)


def _read_trec(
    run: Path, atoms_path: Path, collector: PredictionCollector, modality: str | None
) -> None:
    if not atoms_path.is_file():
        raise BenchregError(
            "a TREC run needs its atoms file (docno -> source_id, region, observed_at, holder)",
            where=atoms_path,
            fix="write <run>.atoms.jsonl beside the run, or set the reader param `atoms`",
        )
    read = _PREFETCHED.pop(_identity(run, atoms_path), None)
    _PREFETCHED.clear()  # a read ahead of files changed since
    if read is None:
        results = trec.read_atoms(atoms_path, RESULT_KEYS)
        lines = trec.read_lines(run, list(results), collector)
    else:  # read ahead while the data loaded (prefetch): its malformed lines said here
        results, lines, malformed = read
        for where in malformed:
            collector.add_malformed(where)
    for qid, first_line, prediction in trec.predictions(lines, results, modality):
        collector.add(qid, prediction, where=first_line)


class _Malformed:
    """What :func:`trec.read_lines` tells a collector, kept for the real one."""

    def __init__(self) -> None:
        self.where: list[str] = []

    def add_malformed(self, where: str) -> None:
        self.where.append(where)


_PREFETCHED: dict[tuple[Any, ...], tuple[Any, trec.TrecLines, list[str]]] = {}


def _identity(run: Path, atoms_path: Path) -> tuple[Any, ...] | None:
    try:
        return tuple(
            (str(p), s.st_size, s.st_mtime_ns, s.st_ino)
            for p, s in ((run, run.stat()), (atoms_path, atoms_path.stat()))
        )
    except OSError:
        return None


def prefetch(path: Path) -> None:
    """A TREC run and its atoms file (beside it) read ahead, while the data loads (core.idle):
    the atoms and the run's lines, which need no sample; :func:`_read_trec` takes them if
    neither file changed since (size, mtime, inode), else reads again. A problem is left to
    that read, which reports it."""
    atoms_path = path.with_name(path.name + ".atoms.jsonl")
    key = _identity(path, atoms_path)
    if path.suffix == ".jsonl" or key is None:
        return
    with gc_paused():
        results = trec.read_atoms(atoms_path, RESULT_KEYS)
        malformed = _Malformed()
        lines = trec.read_lines(path, list(results), malformed)  # type: ignore[arg-type]
    if _identity(path, atoms_path) == key:
        _PREFETCHED.clear()  # one run read ahead at a time
        _PREFETCHED[key] = (results, lines, malformed.where)


read_run.prefetch = prefetch  # type: ignore[attr-defined]  # fills its cache: core.idle
