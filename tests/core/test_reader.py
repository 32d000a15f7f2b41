"""The shared record reader: JSONL / JSON lists, exact locations, duplicate keys and ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.reader import index_by_id, read_json_strict, read_records


def test_jsonl_records_carry_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "x"}\n\n{"id": "y"}\n', encoding="utf-8")
    records = read_records(path)
    assert [r.where for r in records] == [f"{path}:1", f"{path}:3"]
    assert [r.data["id"] for r in records] == ["x", "y"]


def test_json_list_items_are_located_by_index(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('[{"id": "x"}, {"id": "y"}]', encoding="utf-8")
    assert [r.where for r in read_records(path)] == [f"{path}[#0]", f"{path}[#1]"]


def test_a_json_file_that_is_not_a_list_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{"id": "x"}', encoding="utf-8")
    with pytest.raises(BenchregError, match="expected a JSON list of records, found a JSON dict"):
        read_records(path)


def test_duplicate_keys_in_one_object_are_an_error_at_the_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "x"}\n{"id": "y", "label": 1, "label": 2}\n', encoding="utf-8")
    with pytest.raises(BenchregError) as info:
        read_records(path)
    assert info.value.message.startswith(f"{path}:2: duplicate key 'label' in one JSON object")


def test_duplicate_keys_in_a_json_document(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"q1": 0,\n "q1": 1}', encoding="utf-8")
    with pytest.raises(BenchregError, match="duplicate key 'q1'"):
        read_json_strict(path)


def test_malformed_line_stops_a_strict_read_and_is_kept_in_a_lenient_one(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "x"}\n{"id": \n{"id": "z"}\n', encoding="utf-8")
    with pytest.raises(BenchregError, match=r"a\.jsonl:2: malformed JSON"):
        read_records(path)
    records = read_records(path, lenient=True)
    assert [r.error is None for r in records] == [True, False, True]
    assert records[1].where == f"{path}:2" and "malformed JSON" in str(records[1].error)


def test_index_by_id_names_both_places_of_a_repeated_id(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "x"}\n{"id": "y"}\n{"id": "x"}\n', encoding="utf-8")
    with pytest.raises(BenchregError) as info:
        index_by_id(read_records(path), "id")
    assert info.value.message.startswith(f"{path}:3: duplicate id 'x' (first at {path}:1)")


@pytest.mark.parametrize("line", ['["not", "an", "object"]', '{"name": "no id"}', '{"id": ""}'])
def test_index_by_id_rejects_records_without_a_usable_id(tmp_path: Path, line: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(BenchregError, match=r"a\.jsonl:1: a record"):
        index_by_id(read_records(path), "id")


def test_a_folder_is_not_read_as_a_file(tmp_path: Path) -> None:
    with pytest.raises(BenchregError, match="expected a file, found a folder"):
        read_records(tmp_path)


def test_lines_overrides_the_suffix_rule(tmp_path: Path) -> None:
    path = tmp_path / "dev.json"  # JSON Lines under a .json name, as PromptCBLUE ships them
    path.write_text('{"id": "a"}\n{"id": "b"}\n', encoding="utf-8")
    assert [r.where for r in read_records(path, lines=True)] == [f"{path}:1", f"{path}:2"]
    with pytest.raises(BenchregError, match="malformed JSON"):
        read_records(path)
    listed = tmp_path / "list.jsonl"
    listed.write_text('[{"id": "a"}]', encoding="utf-8")
    assert read_records(listed, lines=False)[0].where == f"{listed}[#0]"
