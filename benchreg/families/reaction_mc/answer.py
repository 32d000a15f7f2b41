"""The answer: one 0-based option index (an int, never a bool, never a float or a string)."""

from __future__ import annotations

import random
from typing import Any

from benchreg.core import registry
from benchreg.core.types import Checked, Sample, Status


class OptionIndex:
    """An int in ``[0, len(options))``; anything else is invalid or out of range."""

    def check(self, answer: Any, sample: Sample) -> Checked:
        if isinstance(answer, bool) or not isinstance(answer, int):
            return Checked(answer, Status.INVALID, f"option index must be an int, got {answer!r}")
        n = len(sample.input["options"])
        if not 0 <= answer < n:
            return Checked(answer, Status.OUT_OF_RANGE, f"option {answer} outside 0..{n - 1}")
        return Checked(answer)

    def random(self, sample: Sample, rng: random.Random) -> int:
        return rng.randrange(len(sample.input["options"]))


registry.answer_schemas.add("reaction_mc_option", OptionIndex())
