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
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError, at
from benchreg.core.io import read_text
from benchreg.core.predictions import PredictionCollector
from benchreg.core.reader import index_by_id, read_records
from benchreg.core.types import Prediction, PredictionSet, Sample, Status

RESULT_KEYS = ("source_id", "region", "observed_at", "holder", "atom_id")


@registry.prediction_readers.register("retrieval_run")
def read_run(
    path: Path, samples: Sequence[Sample], task_name: str, atoms: str | None = None
) -> PredictionSet:
    collector = PredictionCollector(path, samples, task=task_name, duplicates="conflicts_invalid")
    if path.suffix == ".jsonl":
        _read_jsonl(path, collector)
        return collector.finish()
    atoms_path = Path(atoms) if atoms else path.with_name(path.name + ".atoms.jsonl")
    _read_trec(path, atoms_path, collector)
    prediction_set = collector.finish()
    prediction_set.files.append(atoms_path)  # hashed into provenance.json with the run
    return prediction_set


def _read_jsonl(path: Path, collector: PredictionCollector) -> None:
    for record in read_records(path, lenient=True):
        obj = record.data
        qid = obj.get("query_id") if isinstance(obj, dict) else None
        if record.error is not None or not isinstance(qid, str) or not qid:
            collector.add_malformed(record.where)
            continue
        latency = obj.get("latency_s")
        latency = float(latency) if isinstance(latency, int | float) else None
        if "results" in obj:
            answer = {"results": obj["results"], "latency_s": latency}
            prediction = Prediction(qid, answer=answer, latency_s=latency)
        elif isinstance(obj.get("output"), str):
            prediction = Prediction(qid, raw_text=obj["output"], latency_s=latency)
        else:
            prediction = Prediction(qid, status=Status.INVALID, detail="no `results`")
        collector.add(qid, prediction, where=record.where, value=obj)


def _read_trec(run: Path, atoms_path: Path, collector: PredictionCollector) -> None:
    if not atoms_path.is_file():
        raise BenchregError(
            "a TREC run needs its atoms file (docno -> source_id, region, observed_at, holder)",
            where=atoms_path,
            fix="write <run>.atoms.jsonl beside the run, or set the reader param `atoms`",
        )
    atoms = {k: r.data for k, r in index_by_id(read_records(atoms_path), "atom_id",
                                                   what="atom").items()}
    lines: dict[str, list[tuple[float, str]]] = defaultdict(list)
    first_line: dict[str, str] = {}
    for number, line in enumerate(read_text(run).splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            qid, docno, score = parts[0], parts[2], float(parts[4])
            if len(parts) != 6:
                raise ValueError
        except (IndexError, ValueError):
            collector.add_malformed(at(run, number))
            continue
        lines[qid].append((score, docno))
        first_line.setdefault(qid, at(run, number))
    for qid, scored in lines.items():
        scored.sort(key=lambda p: (p[0], p[1]), reverse=True)
        collector.add(qid, _trec_prediction(qid, scored, atoms), where=first_line[qid])


def _trec_prediction(
    qid: str, scored: list[tuple[float, str]], atoms: dict[str, Any]
) -> Prediction:
    results = []
    for score, docno in scored:
        atom = atoms.get(docno)
        if atom is None:
            return Prediction(qid, status=Status.INVALID, detail=f"docno {docno!r} not in atoms")
        results.append({**{k: atom[k] for k in RESULT_KEYS if k in atom}, "score": score})
    return Prediction(qid, answer={"results": results, "latency_s": None})
