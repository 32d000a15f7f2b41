"""Reader for prediction files: one JSON object `{question_id: option_index}`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError, at
from benchreg.core.io import read_text
from benchreg.core.predictions import PredictionCollector
from benchreg.core.types import Prediction, PredictionSet, Sample


class _Pairs(list[tuple[str, Any]]):
    """A decoded JSON object kept as its (key, value) pairs, so a repeated key is not lost."""


def _plain(value: Any) -> Any:
    """A decoded value with its objects as dicts (for nested values of an entry)."""
    if isinstance(value, _Pairs):
        return {key: _plain(item) for key, item in value}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def read_pairs(path: Path) -> _Pairs:
    """The (question id, value) pairs of the file's top-level object, repeats included."""
    try:
        data = json.loads(read_text(path), object_pairs_hook=_Pairs)
    except json.JSONDecodeError as exc:
        raise BenchregError(
            f"malformed JSON ({exc.msg}, column {exc.colno})", where=at(path, exc.lineno)
        ) from None
    if not isinstance(data, _Pairs):
        raise BenchregError(
            f"a predictions file must be a JSON object {{question_id: option_index}}, "
            f"found a {type(data).__name__}",
            where=path,
            fix="write one object mapping each question id to a 0-based option index",
        )
    return data


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@registry.prediction_readers.register("reaction_mc_json")
def read_predictions(
    path: Path, samples: Sequence[Sample], task_name: str, text_values: str = "invalid"
) -> PredictionSet:
    """`{id: index}`; the answer schema then marks non-integers invalid, bad indices out of range.

    Ids absent from the file are missing (scored 0); ids not in the data set are listed as
    unknown. A question id given twice with the same value counts once; with different values
    the question is scored invalid (and noted). With ``text_values: parse`` a string value is
    taken as model text and run through the task's parser instead of being invalid.
    """
    if text_values not in ("invalid", "parse"):
        raise BenchregError(
            f"text_values must be 'invalid' or 'parse', not {text_values!r}",
            where=f"task {task_name}",
        )
    collector = PredictionCollector(path, samples, task=task_name, duplicates="conflicts_invalid")
    add, parse = collector.add, text_values == "parse"
    for i, (qid, raw) in enumerate(read_pairs(path)):
        if type(raw) is int:  # the common entry; an int said is equal to an int alone
            add(qid, Prediction(qid, answer=raw), where=(i, qid), value=raw)
            continue
        value = _plain(raw)
        if isinstance(value, str) and parse:
            prediction = Prediction(qid, raw_text=value)
        else:
            prediction = Prediction(qid, answer=value)
        # canonical JSON tells 1, 1.0 and true apart (they compare equal in Python)
        add(qid, prediction, where=(i, qid), value=_canonical(value))
    return collector.finish()
