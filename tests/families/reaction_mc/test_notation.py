"""Reading yields, ee, er, dr, rr in the usual notations; what cannot be read is an error."""

from __future__ import annotations

import pytest

from benchreg.families.reaction_mc.notation import read_ee, read_ratio, read_yield


@pytest.mark.parametrize(
    ("raw", "value"),
    [(85, 85.0), (85.5, 85.5), ("85", 85.0), ("85%", 85.0), ("85 %", 85.0), ("<5%", 5.0),
     (">95", 95.0), ("≥90%", 90.0), ("trace", 0.0), ("n.d.", 0.0), ("NR", 0.0),
     ("quant.", 100.0), (-0.8, 0.0)],
)
def test_yield_forms(raw: object, value: float) -> None:
    assert read_yield(raw).value == pytest.approx(value)
    assert read_yield(raw).error is None


@pytest.mark.parametrize("raw", [None, "", "-", "—", "n/a", float("nan")])
def test_absent_fields(raw: object) -> None:
    assert read_yield(raw).absent and read_ee(raw).absent and read_ratio(raw).absent


@pytest.mark.parametrize("raw", ["10-15%", "85b", "85 (72)", "high", True])
def test_unreadable_yield_is_an_error(raw: object) -> None:
    reading = read_yield(raw)
    assert reading.value is None and reading.error


@pytest.mark.parametrize(
    ("raw", "fraction"),
    [(90, 0.95), ("90", 0.95), ("-90", 0.95), ("90% ee", 0.95), (">99% ee", 0.995),
     ("(R) 80", 0.9), ("80 (S)", 0.9), ("rac", 0.5), (0, 0.5)],
)
def test_ee_forms(raw: object, fraction: float) -> None:
    assert read_ee(raw).value == pytest.approx(fraction)


def test_ee_not_determined_is_absent_and_over_100_is_error() -> None:
    assert read_ee("n.d.").absent
    assert read_ee("120").error
    assert read_ee("good").error


@pytest.mark.parametrize(
    ("raw", "fraction"),
    [("95:5", 0.95), ("5:95", 0.95), ("95/5", 0.95), (">20:1", 20 / 21), ("≥19:1", 0.95),
     ("1:1", 0.5), ("80:15:5", 0.8), (20, 20 / 21), ("20", 20 / 21), (0.5, 2 / 3), (1, 0.5),
     ("95%", 0.95), ("30%", 0.7), ("single diastereomer", 1.0), ("10:1 dr", 10 / 11),
     ("dr 3:1", 0.75), ("e.r. 97:3", 0.97)],
)
def test_ratio_forms(raw: object, fraction: float) -> None:
    assert read_ratio(raw).value == pytest.approx(fraction)


@pytest.mark.parametrize("raw", ["0:0", "abc", "3:1 to 5:1", "120%", "-3"])
def test_unreadable_ratio_is_an_error(raw: str) -> None:
    assert read_ratio(raw, "dr").error
