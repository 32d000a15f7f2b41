"""The pydantic models of a retrieval data root: set entries and manifest rows."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from benchreg.families.retrieval.records import SPLITS, Entry, Gold, ManifestRow, Origin, Scope


def entry_data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "query_id": "q1",
        "modality": "pdf",
        "question": "How much was spent?",
        "answer": "41,200 euros",
        "answer_format": "str",
        "gold": [{"source_id": "doc", "region": {"page": 1}}],
        "unanswerable": False,
        "origin": {"dataset": "d", "revision": "r"},
        "split": "dev",
    }
    return {**data, **changes}


def row_data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "source_id": "doc",
        "modality": "pdf",
        "dataset": "d",
        "revision": "r",
        "license": "CC0-1.0",
        "annotation_source": "hand-written",
    }
    return {**data, **changes}


def first_error(exc: pytest.ExceptionInfo[ValidationError]) -> tuple[tuple[Any, ...], str]:
    error = exc.value.errors()[0]
    return tuple(error["loc"]), error["type"]


def test_splits() -> None:
    assert SPLITS == ("dev", "test")


def test_an_entry_with_defaults() -> None:
    entry = Entry.model_validate(entry_data())
    assert entry.scope == Scope(holder=None, session=None, scenario=None)
    assert entry.as_of is None
    assert entry.gold == [Gold(source_id="doc", region={"page": 1})]
    assert entry.origin == Origin(dataset="d", revision="r", item=None, license=None)


def test_an_entry_keeps_any_split_for_the_validator() -> None:
    assert Entry.model_validate(entry_data(split="train")).split == "train"


@pytest.mark.parametrize(
    ("changes", "loc", "kind"),
    [
        ({"modality": "audio"}, ("modality",), "literal_error"),
        ({"answer_format": "bool"}, ("answer_format",), "literal_error"),
        ({"query_id": ""}, ("query_id",), "string_too_short"),
        ({"note": "x"}, ("note",), "extra_forbidden"),
        ({"gold": [{"source_id": "", "region": {}}]}, ("gold", 0, "source_id"), "string_too_short"),
        ({"gold": [{"source_id": "d", "region": {}, "x": 1}]}, ("gold", 0, "x"), "extra_forbidden"),
        ({"scope": {"owner": "alice"}}, ("scope", "owner"), "extra_forbidden"),
        ({"origin": {"dataset": "d", "revision": ""}}, ("origin", "revision"), "string_too_short"),
    ],
)
def test_entry_refusals(changes: dict[str, Any], loc: tuple[Any, ...], kind: str) -> None:
    with pytest.raises(ValidationError) as info:
        Entry.model_validate(entry_data(**changes))
    assert first_error(info) == (loc, kind)


@pytest.mark.parametrize("missing", ["unanswerable", "origin", "split", "gold", "answer_format"])
def test_entry_required_fields(missing: str) -> None:
    data = entry_data()
    del data[missing]
    with pytest.raises(ValidationError) as info:
        Entry.model_validate(data)
    assert first_error(info) == ((missing,), "missing")


def test_an_entry_is_frozen() -> None:
    entry = Entry.model_validate(entry_data())
    with pytest.raises(ValidationError, match="frozen"):
        entry.query_id = "q2"  # type: ignore[misc]


def test_a_manifest_row_keeps_extra_fields() -> None:
    row = ManifestRow.model_validate(row_data(format="txt", notes="scanned"))
    assert row.path is None and row.sha256 is None
    assert row.observed_at is None and row.holder is None
    assert row.model_extra == {"format": "txt", "notes": "scanned"}


@pytest.mark.parametrize(
    ("changes", "loc", "kind"),
    [
        ({"modality": "audio"}, ("modality",), "literal_error"),
        ({"source_id": ""}, ("source_id",), "string_too_short"),
        ({"dataset": ""}, ("dataset",), "string_too_short"),
        ({"annotation_source": ""}, ("annotation_source",), "string_too_short"),
        ({"path": 3}, ("path",), "string_type"),
    ],
)
def test_manifest_row_refusals(changes: dict[str, Any], loc: tuple[Any, ...], kind: str) -> None:
    with pytest.raises(ValidationError) as info:
        ManifestRow.model_validate(row_data(**changes))
    assert first_error(info) == (loc, kind)


def test_a_manifest_row_needs_a_license() -> None:
    data = row_data()
    del data["license"]
    with pytest.raises(ValidationError) as info:
        ManifestRow.model_validate(data)
    assert first_error(info) == (("license",), "missing")
