"""Reader for prediction files: one JSON object `{question_id: option_index}`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loguru import logger

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.io import read_json
from benchreg.core.types import Prediction, PredictionSet, Sample


@registry.prediction_readers.register("reaction_mc_json")
def read_predictions(
    path: Path, samples: Sequence[Sample], task_name: str, text_values: str = "invalid"
) -> PredictionSet:
    """`{id: index}`; the answer schema then marks non-integers invalid, bad indices out of range.

    Ids absent from the file are missing (scored 0); ids not in the data set are listed in
    ``unknown_ids``. With ``text_values: parse`` a string value is taken as model text and run
    through the task's parser instead of being invalid.
    """
    if text_values not in ("invalid", "parse"):
        raise BenchregError(
            f"text_values must be 'invalid' or 'parse', not {text_values!r}",
            where=f"task {task_name}",
        )
    data = read_json(path)
    if not isinstance(data, dict):
        raise BenchregError(
            f"a predictions file must be a JSON object {{question_id: option_index}}, "
            f"found a {type(data).__name__}",
            where=path,
            fix="write one object mapping each question id to a 0-based option index",
        )
    known = {s.id for s in samples}
    by_id: dict[str, Prediction] = {}
    unknown: list[str] = []
    for qid, value in data.items():
        if qid not in known:
            unknown.append(qid)
            continue
        if isinstance(value, str) and text_values == "parse":
            by_id[qid] = Prediction(qid, raw_text=value)
        else:
            by_id[qid] = Prediction(qid, answer=value)
    if unknown:
        logger.warning(
            f"{path}: {len(unknown)} prediction(s) for ids not in {task_name}, "
            f"e.g. {unknown[0]!r}; ignored"
        )
    return PredictionSet(by_id=by_id, files=[path], unknown_ids=unknown)
