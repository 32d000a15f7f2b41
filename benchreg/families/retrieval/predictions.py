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

Both are read as a stream (JSON Lines by the core reader, `benchreg.core.reader.json_line_spans`,
which names a malformed line; TREC by trec.py), and results of the modality's common single-unit
shape are kept in columns (columns.py), not as a dict per result; `file:line` strings are made
only for the lines a message names, and a JSON Lines line is kept by its place in the file
(columns.LineRef), not its value, for telling a repeated query id's lines apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError, at
from benchreg.core.load import gc_paused
from benchreg.core.predictions import PredictionCollector
from benchreg.core.reader import json_line_spans
from benchreg.core.types import Prediction, PredictionSet, Sample, Status
from benchreg.families.retrieval import trec
from benchreg.families.retrieval.columns import UNIT_KEY, JsonlColumns, LineRef

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
    collector = PredictionCollector(path, samples, task=task_name, duplicates="conflicts_invalid")
    with gc_paused():
        if path.suffix == ".jsonl":
            _read_jsonl(path, collector, modality)
            return collector.finish()
        atoms_path = Path(atoms) if atoms else path.with_name(path.name + ".atoms.jsonl")
        _read_trec(path, atoms_path, collector, modality)
        prediction_set = collector.finish()
    prediction_set.files.append(atoms_path)  # hashed into provenance.json with the run
    return prediction_set


def _read_jsonl(path: Path, collector: PredictionCollector, modality: str | None) -> None:
    columns = JsonlColumns(modality) if modality is not None else None
    for line in json_line_spans(path, lenient=True):
        if line.error is not None:
            collector.add_malformed(at(path, line.number))
            continue
        ref = LineRef(path, line.offset, line.size)
        _add_line(collector, columns, path, line.number, line.value, ref)
    if columns is not None:
        columns.run.finish()


def _latency(obj: dict[str, Any]) -> float | None:
    latency = obj.get("latency_s")
    return float(latency) if isinstance(latency, int | float) else None


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
    latency = _latency(obj)
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
    results = trec.read_atoms(atoms_path, RESULT_KEYS)
    lines = trec.read_lines(run, list(results), collector)
    for qid, first_line, prediction in trec.predictions(lines, results, modality):
        collector.add(qid, prediction, where=first_line)
