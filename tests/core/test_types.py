"""core.types: samples made from a loaded-data cache entry's rows."""

from __future__ import annotations

import dataclasses

import pytest

from benchreg.core.types import Sample, samples_of_rows


def test_samples_of_rows_are_the_samples_their_fields_make() -> None:
    rows = [("a", {"x": 1}, 2, {"line": 1}), ("b", {}, None, {})]
    made = samples_of_rows(iter(rows))
    assert made == [Sample(*row) for row in rows]
    assert [type(s) for s in made] == [Sample, Sample]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].gold = 3  # type: ignore[misc]
