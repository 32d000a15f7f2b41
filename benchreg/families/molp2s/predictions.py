"""Reader for MolP2S prediction files (JSONL, one object per line)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loguru import logger

from benchreg.core import registry
from benchreg.core.errors import BenchregError, at
from benchreg.core.io import iter_jsonl
from benchreg.core.types import Prediction, PredictionSet, Sample, Status
from benchreg.families.molp2s.parser import KEY


@registry.prediction_readers.register("molp2s_jsonl")
def read_predictions(path: Path, samples: Sequence[Sample], task_name: str) -> PredictionSet:
    """Lines `{record_id, selected_candidate_index, reasoning}` or `{record_id, invalid: true}`.

    A line may instead carry the model's text as `output` (parsed by the task's parser).
    A duplicate record_id rejects the whole file.
    """
    known = {s.id for s in samples}
    by_id: dict[str, Prediction] = {}
    first_line: dict[str, int] = {}
    unknown: list[str] = []
    for number, obj in iter_jsonl(path):
        if not isinstance(obj, dict) or not isinstance(obj.get("record_id"), str):
            raise BenchregError(
                "a prediction line must be an object with a string `record_id`",
                where=at(path, number),
            )
        rid = obj["record_id"]
        if rid in first_line:
            raise BenchregError(
                f"duplicate record_id {rid!r} (first at line {first_line[rid]})",
                where=at(path, number),
                fix="keep one prediction per record",
            )
        first_line[rid] = number
        if rid not in known:
            unknown.append(rid)
            continue
        by_id[rid] = _prediction(rid, obj)
    if unknown:
        logger.warning(
            f"{path}: {len(unknown)} prediction(s) for records not in {task_name}, "
            f"e.g. {unknown[0]!r}; ignored"
        )
    return PredictionSet(by_id=by_id, files=[path], unknown_ids=unknown)


def _prediction(rid: str, obj: dict) -> Prediction:
    reasoning = obj.get("reasoning")
    meta = {"reasoning": reasoning} if isinstance(reasoning, str) and reasoning else {}
    if obj.get("invalid") is True:
        return Prediction(rid, status=Status.INVALID, detail="marked invalid", metadata=meta)
    if KEY in obj:
        return Prediction(rid, answer=obj[KEY], metadata=meta)
    if isinstance(obj.get("output"), str):
        return Prediction(rid, raw_text=obj["output"], metadata=meta)
    return Prediction(rid, status=Status.INVALID, detail=f"no {KEY} and not marked invalid")
