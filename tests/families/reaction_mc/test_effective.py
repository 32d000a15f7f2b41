"""The effective score of one option: yield x enantio, dr and rr major fractions."""

from __future__ import annotations

import pytest

from benchreg.families.reaction_mc.effective import outcome_of


def test_effective_uses_ee_before_er_and_missing_counts_as_one() -> None:
    assert outcome_of({"yield": 80, "ee": 90, "er": "50:50"}).effective == pytest.approx(76.0)
    assert outcome_of({"yield": 80, "er": "95:5"}).effective == pytest.approx(76.0)
    assert outcome_of({"yield": 80, "ee": None, "dr": "3:1", "rr": "1:1"}).effective == (
        pytest.approx(80 * 0.75 * 0.5)
    )
    assert outcome_of({"yield": 80}).effective == 80.0


def test_effective_reports_unreadable_parts() -> None:
    outcome = outcome_of({"yield": 80, "dr": "lots"})
    assert not outcome.readable and "unreadable dr 'lots'" in outcome.errors[0]
    assert not outcome_of({"ee": 90}).readable  # no yield
    assert outcome_of({}, fallback_yield=42).effective == 42.0


NOTATION_CELLS = [
    None, float("nan"), 0, 0.0, -3, -2.5, 85, 85.0, True, "85%", "<5%", "trace", "n.d.", "quant.",
    "", "-", "rac", "92% ee", "-92", "(R) 92", "120", ">20:1", "3:1", "1/1/2", "20", "0.5", "95%",
    "single", "10-15%", "85b", [1], {"a": 1}, " 90 % ", "≥90", "not determined",
]


def _spec_outcome(scores: dict, fallback_yield: object) -> tuple:
    """The spec's reading, composed plainly from the notation readers (no fast paths)."""
    from benchreg.families.reaction_mc.notation import read_ee, read_ratio, read_yield

    raw_yield = scores.get("yield")
    yield_reading = read_yield(fallback_yield if raw_yield is None else raw_yield)
    readings = [yield_reading]
    errors = ["no yield"] if yield_reading.absent else []
    ee = read_ee(scores.get("ee"))
    fractions = [ee if not ee.absent else read_ratio(scores.get("er"), "er"),
                 read_ratio(scores.get("dr"), "dr"), read_ratio(scores.get("rr"), "rr")]
    readings += fractions
    effective = yield_reading.value
    if effective is not None:
        for reading in fractions:
            effective *= 1.0 if reading.value is None else reading.value
    errors += [r.error for r in readings if r.error]
    return yield_reading.value, effective, tuple(errors), tuple(r.note for r in readings if r.note)


def test_outcome_of_agrees_with_the_plain_composition_of_the_readers() -> None:
    import random

    from benchreg.families.reaction_mc.effective import outcome_of

    rng = random.Random(7)
    for _ in range(5000):
        scores = {k: rng.choice(NOTATION_CELLS) for k in ("yield", "ee", "er", "dr", "rr")
                  if rng.random() < 0.6}
        fallback = rng.choice(NOTATION_CELLS)
        assert tuple(outcome_of(scores, fallback)) == _spec_outcome(scores, fallback), scores
