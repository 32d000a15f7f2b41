"""Equal parts of one file's questions made one object.

A release repeats its tables' reactants, products and conditions in question after question, and
the outcomes of its options in `meta.scores`. Decoded, each repetition is an object of its own;
shared, a large file's samples take a fraction of the memory, and the loaded-data cache (marshal,
which writes an object met again as a reference) keeps and reads back each once. Nothing changes
a sample's data once built, so equal parts can be one object.

"Equal" is equal in every respect a sample's JSON shows: the parts' :mod:`marshal` bytes (format
2, which has no back-references), which spell out every type (1, 1.0 and true stay apart, and
so do 0.0 and -0.0) and every key order.
"""

from __future__ import annotations

import marshal
from typing import Any

from benchreg.families.reaction_mc.records import QuestionFields

SHARED_INPUT = ("reactants", "products", "constant_conditions", "fixed_conditions")


class Sharer:
    """The first equal part of a file, for each one met after it."""

    __slots__ = ("first",)

    def __init__(self) -> None:
        self.first: dict[bytes, Any] = {}

    def same(self, value: Any) -> Any:
        return self.first.setdefault(marshal.dumps(value, 2), value)

    def question(self, question: QuestionFields) -> None:
        """In place: a validated question's options, outcomes, reactants, products, condition
        groups and texts, each the first equal one of the file."""
        same = self.same
        meta: dict[str, Any] = question["meta"]  # type: ignore[assignment]
        meta["scores"] = [same(entry) for entry in meta["scores"]]
        for key in ("doi", "parent_table_id"):
            if key in meta:
                meta[key] = same(meta[key])
        question["options"] = [same(option) for option in question["options"]]
        inp: dict[str, Any] = question["input"]  # type: ignore[assignment]
        for key in SHARED_INPUT:
            if key in inp:
                inp[key] = same(inp[key])
        question["target_key"] = same(question["target_key"])
        question["varying_keys"] = same(question["varying_keys"])
