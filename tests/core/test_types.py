"""core.types: a Sample is a frozen value."""

from __future__ import annotations

import dataclasses

import pytest

from benchreg.core.types import Sample


def test_a_sample_is_frozen_and_equal_by_value() -> None:
    rows = [("a", {"x": 1}, 2, {"line": 1}), ("b", {}, None, {})]
    made = [Sample(*row) for row in rows]
    assert made == [Sample(*row) for row in rows]
    assert dataclasses.astuple(made[0]) == rows[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].gold = 3  # type: ignore[misc]
