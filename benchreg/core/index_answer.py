"""Answer schemas that several families share."""

from __future__ import annotations

import json
import random
from typing import Any

from benchreg.core.types import Checked, Choices, Sample, Status

_VALID: dict[int, Checked] = {}  # a valid index's (immutable) verdict, made once per index
_VALID_KEPT = 1024


def _valid(answer: int) -> Checked:
    checked = Checked(answer)
    if answer < _VALID_KEPT:
        _VALID[answer] = checked
    return checked


class IndexInto:
    """A 0-based index into the list ``sample.input[key]``: an int (not a bool) in range.

    ``reply_key``: the key of the JSON object in which a reply states the index (MolP2S:
    ``selected_candidate_index``; reaction-MC: ``answer``). It is what the schema states for
    constrained decoding (:meth:`json_schema`: an object with that key, an integer among the
    sample's indices) and how a reply writes each choice (:meth:`choices`, for option
    probabilities). The task's parser reads that object as it reads any reply."""

    json_is_answer = False  # the JSON is the reply the parser reads, not the answer itself

    def __init__(self, key: str, noun: str = "index", reply_key: str | None = None) -> None:
        self.key = key
        self.noun = noun
        self.reply_key = reply_key

    def check(self, answer: Any, sample: Sample) -> Checked:
        if type(answer) is int and 0 <= answer < len(sample.input[self.key]):  # (not a bool)
            return _VALID.get(answer) or _valid(answer)
        if isinstance(answer, bool) or not isinstance(answer, int):
            return Checked(answer, Status.INVALID, f"{self.noun} must be an int, got {answer!r}")
        n = len(sample.input[self.key])
        if not 0 <= answer < n:
            return Checked(answer, Status.OUT_OF_RANGE, f"{self.noun} {answer} outside 0..{n - 1}")
        return Checked(answer)

    def random(self, sample: Sample, rng: random.Random) -> int:
        return rng.randrange(len(sample.input[self.key]))

    def json_schema(self, sample: Sample) -> dict[str, Any] | None:
        """``{"<reply_key>": <one of 0..n-1>}``: an enum rather than minimum/maximum, which not
        every grammar converter supports (llama-cpp-python's does not)."""
        n = len(sample.input[self.key])
        index = {"type": "integer", "enum": list(range(n))}
        if self.reply_key is None:
            return index
        return {
            "type": "object",
            "properties": {self.reply_key: index},
            "required": [self.reply_key],
            "additionalProperties": False,
        }

    def choices(self, sample: Sample) -> Choices:
        """Index i written as ``{"<reply_key>": i}`` (or bare, without a reply key)."""
        n = len(sample.input[self.key])
        prefix, suffix = ("", "")
        if self.reply_key is not None:
            prefix, suffix = "{" + json.dumps(self.reply_key) + ":", "}"
        return Choices(tuple(range(n)), tuple(str(i) for i in range(n)), prefix, suffix)
