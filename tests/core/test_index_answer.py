from __future__ import annotations

import random

import pytest

from benchreg.core.index_answer import IndexInto
from benchreg.core.types import Sample, Status

SAMPLE = Sample(id="q1", input={"options": ["a", "b", "c"]}, gold=1)
SCHEMA = IndexInto("options", "option index")


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        (0, Status.OK),
        (2, Status.OK),
        (3, Status.OUT_OF_RANGE),
        (-1, Status.OUT_OF_RANGE),
        (True, Status.INVALID),
        (1.0, Status.INVALID),
        ("1", Status.INVALID),
        (None, Status.INVALID),
    ],
)
def test_index_into_checks_type_then_range(answer: object, status: Status) -> None:
    checked = SCHEMA.check(answer, SAMPLE)
    assert checked.status is status
    assert (checked.detail is None) == (status is Status.OK)


def test_random_answers_are_valid_and_seeded() -> None:
    draws = [SCHEMA.random(SAMPLE, random.Random(7)) for _ in range(3)]
    assert len(set(draws)) == 1
    assert all(SCHEMA.check(d, SAMPLE).status is Status.OK for d in draws)
