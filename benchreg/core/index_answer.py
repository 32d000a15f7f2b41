"""Answer schemas that several families share."""

from __future__ import annotations

import random
from typing import Any

from benchreg.core.types import Checked, Sample, Status


class IndexInto:
    """A 0-based index into the list ``sample.input[key]``: an int (not a bool) in range."""

    def __init__(self, key: str, noun: str = "index") -> None:
        self.key = key
        self.noun = noun

    def check(self, answer: Any, sample: Sample) -> Checked:
        if isinstance(answer, bool) or not isinstance(answer, int):
            return Checked(answer, Status.INVALID, f"{self.noun} must be an int, got {answer!r}")
        n = len(sample.input[self.key])
        if not 0 <= answer < n:
            return Checked(answer, Status.OUT_OF_RANGE, f"{self.noun} {answer} outside 0..{n - 1}")
        return Checked(answer)

    def random(self, sample: Sample, rng: random.Random) -> int:
        return rng.randrange(len(sample.input[self.key]))
