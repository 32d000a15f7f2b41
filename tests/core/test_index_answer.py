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


def test_a_valid_index_verdict_made_once_is_never_a_bools() -> None:
    assert SCHEMA.check(1, SAMPLE).status is Status.OK
    assert SCHEMA.check(1, SAMPLE) is SCHEMA.check(1, SAMPLE)  # one verdict per index
    assert SCHEMA.check(True, SAMPLE).status is Status.INVALID  # True == 1, yet no index
    assert SCHEMA.check(2000, Sample("big", {"options": list(range(3000))}, 0)).answer == 2000
