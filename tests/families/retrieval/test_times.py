"""ISO 8601 times with a UTC offset: `parse_time` and `time_problem`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from benchreg.families.retrieval.times import BadTime, parse_time, time_problem


def test_an_offset_time_is_parsed_aware() -> None:
    value = parse_time("2024-01-10T09:00:00+00:00")
    assert value == datetime(2024, 1, 10, 9, 0, tzinfo=UTC)
    assert value.utcoffset() == timedelta(0)


def test_z_means_utc() -> None:
    assert parse_time("2024-01-10T09:00:00Z") == parse_time("2024-01-10T09:00:00+00:00")


def test_offsets_compare_as_instants() -> None:
    east = parse_time("2024-01-10T11:00:00+02:00")
    assert east.utcoffset() == timedelta(hours=2)
    assert east == parse_time("2024-01-10T09:00:00+00:00")
    assert parse_time("2024-01-10T10:00:00+03:00") < parse_time("2024-01-10T08:00:00+00:00")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2024-01-10T09:00:00", "time '2024-01-10T09:00:00' has no UTC offset (write e.g. +00:00)"),
        ("2024-01-10", "time '2024-01-10' has no UTC offset (write e.g. +00:00)"),
        ("yesterday", "not an ISO 8601 time: 'yesterday'"),
        ("", "not an ISO 8601 time: ''"),
    ],
)
def test_bad_strings_are_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(BadTime) as info:
        parse_time(text)
    assert str(info.value) == message
    assert time_problem(text) == message


@pytest.mark.parametrize("value", [5, None, 1.5])
def test_a_non_string_is_refused(value: object) -> None:
    with pytest.raises(BadTime, match=r"a time must be an ISO 8601 string, got"):
        parse_time(value)  # type: ignore[arg-type]
    assert time_problem(value) == f"a time must be an ISO 8601 string, got {value!r}"


def test_an_unhashable_value_is_a_problem_not_a_crash() -> None:
    # parse_time is cached: a list cannot even be looked up (TypeError), time_problem says why
    assert time_problem(["2024-01-10T09:00:00+00:00"]) == (
        "a time must be an ISO 8601 string, got ['2024-01-10T09:00:00+00:00']"
    )


def test_a_valid_time_has_no_problem() -> None:
    assert time_problem("2024-03-10T09:00:00+00:00") is None
    assert time_problem("2024-03-10T09:00:00.250-05:30") is None


def test_bad_time_is_a_value_error() -> None:
    assert issubclass(BadTime, ValueError)
