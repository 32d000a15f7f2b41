"""Reader for MolP2S prediction files (JSONL, one object per line)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import at
from benchreg.core.load import gc_paused
from benchreg.core.predictions import PredictionCollector
from benchreg.core.reader import json_lines, read_records
from benchreg.core.types import Prediction, PredictionSet, Sample, Status
from benchreg.families.molp2s.parser import KEY


@registry.prediction_readers.register("molp2s_jsonl")
def read_predictions(path: Path, samples: Sequence[Sample], task_name: str) -> PredictionSet:
    """Lines `{record_id, selected_candidate_index, reasoning}` or `{record_id, invalid: true}`.

    A line may instead carry the model's text as `output` (parsed by the task's parser).
    A duplicate record_id rejects the whole file (the spec's rule). A line that is not JSON, not
    an object or has no string `record_id` is counted as malformed and listed in the notes; the
    rest of the file is still read.
    """
    collector = PredictionCollector(path, samples, task=task_name, duplicates="reject")
    with gc_paused():
        if path.suffix == ".jsonl":
            entries: Iterable[tuple[str | int, Any, str | None]] = json_lines(path, lenient=True)
        else:  # a JSON list
            entries = ((r.where, r.data, r.error) for r in read_records(path, lenient=True))
        read: list[tuple[str, Prediction, str | int]] = []
        for where, obj, error in entries:
            rid = obj.get("record_id") if error is None and type(obj) is dict else None
            if not isinstance(rid, str) or not rid:
                collector.add_malformed(at(path, where) if isinstance(where, int) else where)
                continue
            if len(obj) == 2 and KEY in obj:  # {record_id, index}: the common line
                read.append((rid, Prediction(rid, answer=obj[KEY]), where))
            else:
                read.append((rid, _prediction(rid, obj), where))
        collector.add_all(read)
    return collector.finish()


def _prediction(rid: str, obj: dict[str, Any]) -> Prediction:
    reasoning = obj.get("reasoning")
    meta = {"reasoning": reasoning} if isinstance(reasoning, str) and reasoning else {}
    if obj.get("invalid") is True:
        return Prediction(rid, status=Status.INVALID, detail="marked invalid", metadata=meta)
    if KEY in obj:
        return Prediction(rid, answer=obj[KEY], metadata=meta)
    if isinstance(obj.get("output"), str):
        return Prediction(rid, raw_text=obj["output"], metadata=meta)
    return Prediction(rid, status=Status.INVALID, detail=f"no {KEY} and not marked invalid")
