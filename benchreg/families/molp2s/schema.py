"""The MolP2S answer: a 0-based index into `candidate_completed_smiles`."""

from __future__ import annotations

import random
from typing import Any

from benchreg.core import registry
from benchreg.core.types import Checked, Sample, Status


class CandidateIndex:
    """An int (not a bool) in ``[0, number of candidates)``."""

    def check(self, answer: Any, sample: Sample) -> Checked:
        if isinstance(answer, bool) or not isinstance(answer, int):
            return Checked(answer, Status.INVALID, f"index must be an integer, got {answer!r}")
        n = len(sample.input["candidate_completed_smiles"])
        if not 0 <= answer < n:
            return Checked(answer, Status.OUT_OF_RANGE, f"index {answer} outside 0..{n - 1}")
        return Checked(answer)

    def random(self, sample: Sample, rng: random.Random) -> int:
        return rng.randrange(len(sample.input["candidate_completed_smiles"]))


registry.answer_schemas.add("candidate_index", CandidateIndex())
