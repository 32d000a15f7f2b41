"""The MolP2S answer schema: a 0-based int index into the candidate list."""

from __future__ import annotations

import random

import pytest

from benchreg.core import registry
from benchreg.core.types import Sample, Status

SAMPLE = Sample(id="r0", input={"candidate_completed_smiles": ["CO", "CN", "CC"]}, gold=1)


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        (0, Status.OK),
        (2, Status.OK),
        (3, Status.OUT_OF_RANGE),
        (-1, Status.OUT_OF_RANGE),
        (True, Status.INVALID),
        ("1", Status.INVALID),
        (1.0, Status.INVALID),
        (None, Status.INVALID),
    ],
)
def test_candidate_index(answer: object, status: Status) -> None:
    assert registry.answer_schemas.get("candidate_index").check(answer, SAMPLE).status is status


def test_random_answers_are_valid() -> None:
    schema = registry.answer_schemas.get("candidate_index")
    rng = random.Random(0)
    draws = {schema.random(SAMPLE, rng) for _ in range(50)}
    assert draws == {0, 1, 2}
