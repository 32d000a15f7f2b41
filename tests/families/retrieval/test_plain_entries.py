"""The plain path of the entry checks (plain.py) reads what the pydantic model reads, and gives
way to the model on everything else (so its error messages stay the model's)."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from benchreg.core.reader import Record, read_records
from benchreg.families.retrieval import validators
from benchreg.families.retrieval.manifest import read_manifest
from benchreg.families.retrieval.plain import PlainEntry, plain_entry
from benchreg.families.retrieval.records import Entry
from tests.families.retrieval.test_records import entry_data as record_entry


class Text(str):
    """A ``str`` subclass: the model accepts it, the plain path leaves it to the model."""


def entry_data(**changes: Any) -> dict[str, Any]:
    """test_records' entry with every optional field set too."""
    full = {
        "scope": {"holder": None, "session": "doc", "scenario": "s"},
        "as_of": None,
        "origin": {"dataset": "d", "revision": "r", "item": "i", "license": "CC0-1.0"},
    }
    return record_entry(**{**full, **changes})


def dump(entry: Entry | PlainEntry) -> dict[str, Any]:
    """The fields of either kind of entry, nested models as dicts (the model's dump)."""
    if isinstance(entry, Entry):
        return entry.model_dump()
    return {
        **entry._asdict(),
        "gold": [g._asdict() for g in entry.gold],
        "scope": entry.scope._asdict(),
        "origin": entry.origin._asdict(),
    }


def assert_read_alike(data: Any) -> bool:
    """When the plain path accepts ``data``, the model does too, with equal fields of equal
    types; returns whether the plain path accepted."""
    plain = plain_entry(copy.deepcopy(data))
    try:
        model = Entry.model_validate(copy.deepcopy(data))
    except ValidationError:
        assert plain is None, data
        return False
    if plain is None:
        return False
    got, want = dump(plain), dump(model)
    assert got == want and list(got) == list(want)
    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]
    return True


VARIANTS: list[tuple[str, Any]] = [
    ("query_id", ""),
    ("query_id", 1),
    ("query_id", Text("q")),
    ("query_id", "q\ud800"),
    ("query_id", "q\u00e9"),
    ("modality", "audio"),
    ("modality", "PDF"),
    ("modality", None),
    ("question", None),
    ("question", ""),
    ("question", b"x"),
    ("answer", 3),
    ("answer", [1]),
    ("answer_format", "bool"),
    ("answer_format", "none"),
    ("gold", []),
    ("gold", ()),
    ("gold", None),
    ("gold", [{"source_id": "doc"}]),
    ("gold", [{"source_id": "", "region": {}}]),
    ("gold", [{"source_id": "doc", "region": {"page": 1}, "extra": 1}]),
    ("gold", [{"source_id": "doc", "region": [1]}]),
    ("gold", [{"source_id": 3, "region": {}}]),
    ("gold", ["doc"]),
    ("gold", [{"source_id": "d\ud800", "region": {"page": 2}}]),
    ("gold", [{"source_id": "doc", "region": {1: 2}}]),
    ("gold", [{"source_id": "doc", "region": {"page": 1}}, {"source_id": "b", "region": {}}]),
    ("scope", None),
    ("scope", {}),
    ("scope", {"holder": "h"}),
    ("scope", {"other": 1}),
    ("scope", {"holder": 1}),
    ("scope", []),
    ("scope", {"session": Text("s")}),
    ("as_of", "2024-01-01T00:00:00+00:00"),
    ("as_of", 5),
    ("as_of", "x\ud800"),
    ("unanswerable", 1),
    ("unanswerable", 0),
    ("unanswerable", "true"),
    ("unanswerable", True),
    ("unanswerable", None),
    ("origin", None),
    ("origin", {"dataset": "d"}),
    ("origin", {"dataset": "d", "revision": ""}),
    ("origin", {"dataset": "d", "revision": "r"}),
    ("origin", {"dataset": "d", "revision": "r", "x": 1}),
    ("origin", {"dataset": "d", "revision": "r", "item": 3}),
    ("origin", {"dataset": "d", "revision": "r", "license": None}),
    ("origin", {"dataset": "d", "revision": Text("r")}),
    ("split", "train"),
    ("split", None),
    ("split", 3),
    ("extra", 1),
]


@pytest.mark.parametrize(("key", "value"), VARIANTS)
def test_a_changed_field_is_read_alike(key: str, value: Any) -> None:
    assert_read_alike(entry_data(**{key: value}))


@pytest.mark.parametrize(
    "key", ["query_id", "modality", "gold", "unanswerable", "origin", "split", "answer", "scope"]
)
def test_a_missing_field_is_read_alike(key: str) -> None:
    data = entry_data()
    del data[key]
    assert assert_read_alike(data) == (key in ("answer", "scope"))  # optional: still plain


def test_plain_entries_take_the_plain_path() -> None:
    assert assert_read_alike(entry_data())
    assert assert_read_alike(entry_data(question="\u00e9t\u00e9", answer=None, unanswerable=True))
    for data in (None, [], "entry", entry_data(unanswerable=1), entry_data(query_id=Text("q"))):
        assert plain_entry(data) is None


@pytest.mark.parametrize("seed", range(4))
def test_random_mixes_of_changes_are_read_alike(seed: int) -> None:
    rng = random.Random(seed)
    accepted = 0
    for _ in range(300):
        data = entry_data()
        for key, value in rng.sample(VARIANTS, rng.randint(0, 3)):
            data[key] = value
        if rng.random() < 0.2:
            del data[rng.choice(sorted(data))]
        accepted += assert_read_alike(data)
    assert accepted > 0


def test_check_entries_gives_what_the_model_path_gives(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = read_manifest(root)
    records = [r for p in sorted((root / "sets").glob("*.jsonl")) for r in read_records(p)]
    data = entry_data(gold=[{"source_id": "nowhere", "region": {"page": 1}}])
    broken = [
        Record(f"x.jsonl:{i}", value)
        for i, value in enumerate(
            [
                data,
                {**records[0].data, "unanswerable": 1},  # coerced by the model: valid
                {**records[1].data, "question": None},
                [1, 2],
                {**records[2].data, "query_id": records[3].data["query_id"]},
                {**records[4].data, "gold": [{"source_id": "x", "region": {"page": 0}}]},
            ]
        )
    ]
    mixed = records + broken
    fast = validators.check_entries(mixed, manifest)
    monkeypatch.setattr(validators, "plain_entry", lambda data: None)
    slow = validators.check_entries(mixed, manifest)
    assert fast[1] == slow[1] and len(fast[1]) >= 4
    assert [(v.where, v.demonstration) for v in fast[0]] == [
        (v.where, v.demonstration) for v in slow[0]
    ]
    assert [dump(v.entry) for v in fast[0]] == [dump(v.entry) for v in slow[0]]
    assert any(type(v.entry) is PlainEntry for v in fast[0])


def test_the_plain_fields_are_the_models() -> None:
    from benchreg.families.retrieval import plain
    from benchreg.families.retrieval.records import Gold, Origin, Scope

    fields = Entry.model_fields
    assert PlainEntry._fields == tuple(fields)
    assert {name for name, f in fields.items() if f.is_required()} == plain.REQUIRED
    assert set(fields) == plain.ALLOWED
    for plain_type, model in ((plain.PlainGold, Gold), (plain.PlainScope, Scope)):
        assert plain_type._fields == tuple(model.model_fields)
    assert plain.PlainOrigin._fields == tuple(Origin.model_fields)
    assert {n for n, f in Origin.model_fields.items() if f.is_required()} == plain.ORIGIN_REQUIRED
