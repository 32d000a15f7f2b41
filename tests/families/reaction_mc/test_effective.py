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
