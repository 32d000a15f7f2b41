"""The shared record reader: JSONL / JSON lists, exact locations, duplicate keys and ids."""

from __future__ import annotations

import json
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


@pytest.mark.parametrize(
    "line",
    [
        '{"a": 1, "a": 2}',
        '{"a": {"b": 1, "b": 2}}',
        '[{"b": 1, "b": 2}]',
        '{"a": "x:y", "a": "z"}',
        '{"t": "a\\":b", "k": 1, "k": 2}',
        '{"k" : 1 , "k"\t:2}',
        '{"a": [1, {"c": 0, "c": 0}]}',
        '{"x": {}, "x": {"y": 1}}',
    ],
)
def test_a_repeated_key_is_found_wherever_it_hides(tmp_path: Path, line: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"flat": 1}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(BenchregError, match=r"a\.jsonl:2: duplicate key"):
        read_records(path)


@pytest.mark.parametrize("flat_share", [0.0, 0.9])
def test_fast_line_decoding_agrees_with_the_per_object_check(
    tmp_path: Path, flat_share: float
) -> None:
    """Seeded fuzz: random nested records, some with a repeated key, some with colons and escaped
    quotes inside strings; the reader must flag exactly the lines the per-object check flags."""
    import json
    import random

    from benchreg.core.reader import DuplicateKeyError, strict_object

    rng = random.Random(7)
    keys = ["a", "b", 'q"', "c:d", "e"]
    strings = ["x", "y:z", 'he said "hi": yes', ":", '":', "\\", " : "]

    def value(depth: int) -> str:
        roll = rng.random()
        if depth > 2 or roll < 0.4:
            return json.dumps(rng.choice([*strings, 1, 2.5, None, True]))
        if roll < 0.6:
            return "[" + ", ".join(value(depth + 1) for _ in range(rng.randint(0, 3))) + "]"
        return obj(depth + 1)

    def obj(depth: int) -> str:
        names = [rng.choice(keys) for _ in range(rng.randint(0, 4))]
        sep = rng.choice([": ", ":", " : ", "\t:"])
        return "{" + ", ".join(json.dumps(k) + sep + value(depth) for k in names) + "}"

    def flat() -> str:  # mostly the fast path; a repeated key now and then
        text = json.dumps(dict.fromkeys(rng.sample(["a", "b", "c", "d"], 3), "v"))
        return text[:-1] + (', "e": 0, "e": 1}' if rng.random() < 0.05 else "}")

    lines = [flat() if rng.random() < flat_share else obj(0) for _ in range(400)]
    path = tmp_path / "fuzz.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = []
    for line in lines:
        try:
            expected.append(json.loads(line, object_pairs_hook=strict_object))
        except DuplicateKeyError:
            expected.append(None)
    assert any(e is None for e in expected) and any(e is not None for e in expected)
    records = read_records(path, lenient=True)
    assert [r.data for r in records] == expected
    assert [r.error is not None for r in records] == [e is None for e in expected]


LIST_TEXTS = [
    "[]", " [ ] ", "[1, 2, 3]", '[{"a": 1}, {"b": [1, 2, {"c": "]"}]}]', "[12345]", "[1,2,]",
    "[1 2]", '{"a": 1}', '[{"a": 1, "a": 2}]', "[1] x", "", "[", "[1,", "  [ 1 , 2 ]  \n",
    '["\\u005d", 3.25e10]', "[true, false, null]", '[{"id": "x:y"}]', "[1]\r\n", "\ufeff[1]",
    "[-]", "[1e]", "[1.5E+3]", "[" + "9" * 4301 + "]",
]


@pytest.mark.parametrize("text", LIST_TEXTS)
def test_a_json_list_reads_as_json_reads_it(tmp_path: Path, text: str) -> None:
    """The items are what `json` (with the repeated-key hook) makes of the file; anything
    `json` refuses is one located error."""
    from benchreg.core.reader import DuplicateKeyError, iter_list_records, strict_object

    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")
    try:
        expected = json.loads(text, object_pairs_hook=strict_object)
    except (ValueError, DuplicateKeyError):
        expected = None
    if not isinstance(expected, list):
        with pytest.raises(BenchregError, match=str(path).replace(".", r"\.")):
            list(iter_list_records(path))
        return
    records = list(iter_list_records(path))
    assert [r.data for r in records] == expected
    assert [r.where for r in records] == [f"{path}[#{i}]" for i in range(len(expected))]


def test_a_repeated_key_in_a_list_is_located_at_its_item(tmp_path: Path) -> None:
    items = [{"id": str(i)} for i in range(5)]
    text = json.dumps(items, indent=2)
    text = text.replace('"id": "3"', '"id": "3", "id": "4"')
    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")
    line = text[: text.index('"id": "3"')].count("\n")  # the line of the item's `{`
    with pytest.raises(BenchregError) as info:
        read_records(path)
    assert info.value.message.startswith(
        f"{path}:{line}: duplicate key 'id' in one JSON object (item #3)"
    )


def test_json_lines_end_at_newlines_only(tmp_path: Path) -> None:
    """A line separator or a carriage return inside a line is the line's own (JSON white space
    or string text), never a line break."""
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a": "x\xe2\x80\xa8y"}\r\n\n  \n{"b": 1}\r{"c": 2}\n')
    with pytest.raises(BenchregError, match=r"a\.jsonl:4: malformed JSON"):
        read_records(path)
    path.write_bytes(b'{"a": "x\xe2\x80\xa8y"}\r\n\n  \n {"b": 1} \r\n')
    records = read_records(path)
    assert [(r.where, r.data) for r in records] == [
        (f"{path}:1", {"a": "x\u2028y"}),
        (f"{path}:4", {"b": 1}),
    ]


def test_line_spans_give_each_lines_bytes(tmp_path: Path) -> None:
    from benchreg.core.reader import json_line_spans

    data = b'{"a": 1}\n\n{"b": [1, 2]}\r\n{"c": "\xc3\xa9"}'
    path = tmp_path / "a.jsonl"
    path.write_bytes(data)
    spans = list(json_line_spans(path))
    assert [s.number for s in spans] == [1, 3, 4]
    assert [json.loads(data[s.offset : s.offset + s.size]) for s in spans] == [
        s.value for s in spans
    ]


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 22])
def test_a_pretty_printed_list_reads_a_buffer_at_a_time_as_json_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    import random

    from benchreg.core import reader

    rng = random.Random(chunk)

    def item(i: int) -> dict:
        return {
            "id": f"q{i}",
            "text": rng.choice(["a", "},", "\\n  },", "x\n  },y"]),
            "nested": [{"k": j, "v": {"w": [j, None, 1.5]}} for j in range(rng.randint(0, 3))],
        }

    items = [item(i) for i in range(60)]
    path = tmp_path / "a.json"
    for indent in (1, 2, 4, "\t"):
        path.write_text(json.dumps(items, indent=indent, ensure_ascii=False), encoding="utf-8")
        monkeypatch.setattr(reader, "CHUNK_BYTES", chunk)
        monkeypatch.setattr(reader, "read_json_strict", None)  # never the whole file at once
        records = list(reader.iter_list_records(path))
        assert [r.data for r in records] == items
        assert [r.where for r in records] == [f"{path}[#{i}]" for i in range(len(items))]


def test_a_cut_in_the_wrong_place_is_never_trusted(tmp_path: Path, monkeypatch) -> None:
    """A hand-edited file whose nested object closes at an item's indentation: the buffer cut
    there does not decode, and the whole file is read instead (the same items)."""
    from benchreg.core import reader

    text = '[\n  {\n    "a": {\n      "b": 1\n  },\n    "c": 2\n  },\n  {\n    "d": 3\n  }\n]\n'
    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(reader, "CHUNK_BYTES", 8)
    assert [r.data for r in reader.iter_list_records(path)] == json.loads(text)


def test_a_problem_after_the_first_buffers_is_the_whole_files_located_error(
    tmp_path: Path, monkeypatch
) -> None:
    from benchreg.core import reader

    items = [{"id": str(i), "v": i} for i in range(50)]
    text = json.dumps(items, indent=2).replace('"id": "40"', '"id": "40", "id": "x"')
    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(reader, "CHUNK_BYTES", 64)
    seen = []
    with pytest.raises(BenchregError, match=r"duplicate key 'id' in one JSON object \(item #40\)"):
        seen.extend(r.data["id"] for r in reader.iter_list_records(path))
    assert seen == [str(i) for i in range(len(seen))] and len(seen) < 41
