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
def test_streamed_json_list_reads_as_the_whole_file(tmp_path: Path, text: str) -> None:
    from functools import partial

    from benchreg.core.reader import iter_list_records

    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")

    def outcome(read):  # the records, or the error the reader stops with
        try:
            return [(r.where, r.data) for r in read()]
        except BenchregError as exc:
            return str(exc)

    whole = outcome(partial(read_records, path))
    if "duplicate key" in str(whole):  # the stream also names the item and its line
        whole = (
            f"{path}:1: duplicate key 'a' in one JSON object of item #0 (the item starts at "
            "this line) (give every key once)"
        )
    for chunk in (1, 2, 3, 7, 1 << 20):  # items and numbers cut by the buffer's end
        assert outcome(partial(iter_list_records, path, chunk_chars=chunk)) == whole


def test_text_lines_split_as_read_text(tmp_path: Path) -> None:
    import random

    from benchreg.core.io import read_text
    from benchreg.core.reader import text_lines

    rng = random.Random(0)
    pieces = ["a", "中", "\n", "\r\n", "\r", "\x0b", "\x1c", "\x85", "\u2028", "\n\n", "{}"]
    path = tmp_path / "a.jsonl"
    for _ in range(300):
        path.write_bytes("".join(rng.choice(pieces) for _ in range(20)).encode("utf-8"))
        want = read_text(path).splitlines()
        for chunk in (1, 2, 5, 1 << 20):
            assert list(text_lines(path, chunk_chars=chunk)) == want


def test_text_lines_report_read_text_errors(tmp_path: Path) -> None:
    from benchreg.core.reader import text_lines

    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a": 1}\n\xff\n')
    with pytest.raises(BenchregError, match=r"a\.jsonl:2: not UTF-8 text"):
        list(text_lines(path, chunk_chars=4))
    with pytest.raises(BenchregError, match="file not found"):
        list(text_lines(tmp_path / "missing.jsonl"))


def _pretty_list(items: list, indent: int = 2) -> str:
    return json.dumps(items, indent=indent, ensure_ascii=False)


PRETTY_ITEMS = [
    {"id": f"q{i}", "options": [{"k": [{"content": "a, b", "SMILES": ""}]}, {"k": []}],
     "meta": {"scores": [{"yield": 1.5 * i, "dr": "10:1"}], "note": "},\n  {"}}
    for i in range(60)
]


@pytest.mark.parametrize("indent", [None, 1, 2, 4])
def test_pretty_printed_lists_read_as_the_whole_file_in_any_buffer(
    tmp_path: Path, indent: int | None
) -> None:
    """Items decoded several at a time (the file's own item separator, learnt from its first
    item) equal the whole-file read, whatever the buffer size cuts."""
    from benchreg.core.reader import iter_list_records

    path = tmp_path / "a.json"
    path.write_text(_pretty_list(PRETTY_ITEMS, indent), encoding="utf-8")
    whole = [(r.where, r.data) for r in read_records(path)]
    for chunk in (5, 97, 1000, 1 << 20):
        assert [(r.where, r.data) for r in iter_list_records(path, chunk_chars=chunk)] == whole


def test_items_decoded_together_share_their_key_strings(tmp_path: Path) -> None:
    from benchreg.core.reader import iter_list_records

    path = tmp_path / "a.json"
    path.write_text(_pretty_list(PRETTY_ITEMS), encoding="utf-8")
    items = [r.data for r in iter_list_records(path)]
    keys = {id(next(iter(item["meta"]["scores"][0]))) for item in items[1:-1]}
    assert len(keys) == 1  # one "yield" string for the items between the first and the last


@pytest.mark.parametrize("where", [1, 30, 59])
def test_a_repeated_key_inside_a_group_is_located_at_its_item(tmp_path: Path, where: int) -> None:
    from benchreg.core.reader import iter_list_records

    text = _pretty_list(PRETTY_ITEMS)
    marker = f'"id": "q{where}",'
    assert marker in text
    path = tmp_path / "a.json"
    path.write_text(text.replace(marker, f'{marker} "id": "again",'), encoding="utf-8")
    line = text[: text.index(marker)].count("\n") + 1 - 1  # the line where the item opens
    with pytest.raises(BenchregError, match=rf"a\.json:{line}: duplicate key 'id' in one JSON "
                       rf"object of item #{where} \(the item starts at this line\)"):
        list(iter_list_records(path))


def test_a_layout_that_changes_midway_falls_back_to_one_item_at_a_time(tmp_path: Path) -> None:
    from benchreg.core.reader import iter_list_records

    head = _pretty_list(PRETTY_ITEMS[:3])[:-2]  # without "\n]"
    tail = ", ".join(json.dumps(item) for item in PRETTY_ITEMS[3:])  # compact, one line
    path = tmp_path / "a.json"
    path.write_text(f"{head},\n  {tail}\n]", encoding="utf-8")
    assert [r.data for r in iter_list_records(path, chunk_chars=300)] == PRETTY_ITEMS


def _part_items(parts, chunk: int = 1 << 22) -> list:
    from benchreg.core.reader import iter_list_part

    return [r.data for part in parts for r in iter_list_part(part, chunk_bytes=chunk)]


@pytest.mark.parametrize("indent", [1, 2, 4, "\t"])
def test_the_parts_of_a_pretty_printed_list_hold_its_items_in_order(
    tmp_path: Path, indent: int | str
) -> None:
    """Cut at item boundaries into parts of about the shares asked for; read part by part (any
    buffer size), the items are those of the whole file."""
    from benchreg.core.reader import iter_list_part, list_parts

    path = tmp_path / "a.json"
    path.write_text(json.dumps(PRETTY_ITEMS, indent=indent, ensure_ascii=False) + "\n")
    for shares in ([1, 1], [1.1, 1, 1], [1] * 7, [3, 1]):
        parts = list_parts(path, shares)
        assert parts is not None and len(parts) == len(shares)
        sizes = [p.end - p.start for p in parts]
        assert sizes[0] / sizes[-1] == pytest.approx(shares[0] / shares[-1], rel=0.3)
        for chunk in (5, 97, 1 << 20):
            assert _part_items(parts, chunk) == PRETTY_ITEMS
    part = list_parts(path, [1, 1])[1]  # type: ignore[index]
    assert next(iter_list_part(part)).where == f"{path}[bytes {part.start}:{part.end}][#0]"


COMPACT_LAYOUTS = [
    {},  # json.dumps: ", " and ": "
    {"separators": (",", ":")},
    {"separators": (" ,  ", " : ")},
]


@pytest.mark.parametrize("layout", COMPACT_LAYOUTS)
def test_a_compact_list_is_cut_at_its_items_too(tmp_path: Path, layout: dict) -> None:
    """A one-line list: the token is the separator and the first key of every item."""
    from benchreg.core.reader import iter_list_records, list_parts

    path = tmp_path / "a.json"
    path.write_text(json.dumps(PRETTY_ITEMS, ensure_ascii=False, **layout), encoding="utf-8")
    for shares in ([1, 1], [1.1, 1, 1], [1] * 7):
        parts = list_parts(path, shares)
        assert parts is not None and len(parts) == len(shares)
        assert parts[0].token.startswith(b"}") and b'{"id"' in parts[0].token
        for chunk in (5, 97, 1000, 1 << 20):
            assert _part_items(parts, chunk) == PRETTY_ITEMS
    whole = [(r.where, r.data) for r in read_records(path)]
    for chunk in (5, 97, 1 << 20):
        assert [(r.where, r.data) for r in iter_list_records(path, chunk_chars=chunk)] == whole


def test_a_compact_token_between_nested_objects_is_checked(tmp_path: Path) -> None:
    """Nested objects whose first key is the items' first key hold the token too: a buffer cut
    there does not decode, an earlier cut of the buffer is tried, and a part cut there is
    unreadable; the reader of the whole file still reads every item, in any buffer size."""
    from benchreg.core.reader import PartUnreadable, iter_list_records, list_parts

    items = [
        {"id": i, "sub": [{"id": f"{i}.{j}", "x": "}, {\"id\": "} for j in range(2 + i % 5)]}
        for i in range(40)
    ]
    path = tmp_path / "a.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    unreadable = 0
    for k in range(1, 20):
        parts = list_parts(path, [k, 20 - k])
        assert parts is not None
        try:
            assert _part_items(parts, 64) == items
        except PartUnreadable:
            unreadable += 1
    assert unreadable > 0  # some cut did land between nested objects
    for chunk in (3, 20, 64, 300, 1 << 20):
        assert [r.data for r in iter_list_records(path, chunk_chars=chunk)] == items


def test_a_list_with_windows_line_ends_is_cut_too(tmp_path: Path) -> None:
    from benchreg.core.reader import list_parts

    path = tmp_path / "a.json"
    path.write_bytes(json.dumps(PRETTY_ITEMS, indent=2).replace("\n", "\r\n").encode())
    parts = list_parts(path, [1, 1, 1])
    assert parts is not None and len(parts) == 3 and _part_items(parts, 64) == PRETTY_ITEMS


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        "[\n  1,\n  2\n]",  # not objects
        "\ufeff" + json.dumps(PRETTY_ITEMS, indent=2),
        json.dumps(PRETTY_ITEMS, indent=2)[:-1],  # no closing bracket
        '{"a": 1}',
    ],
)
def test_a_file_that_is_not_a_list_of_objects_is_not_cut(
    tmp_path: Path, text: str
) -> None:
    from benchreg.core.reader import iter_list_records, list_parts

    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")
    assert list_parts(path, [1, 1]) is None
    if text.rstrip().endswith("]") and not text.startswith("\ufeff"):  # still read as a list
        assert [r.data for r in iter_list_records(path)] == json.loads(text)


NESTED_AT_THE_TOP_INDENT = """[
  {
    "a": [
  {
    "b": 1
  },
  {
    "c": 2
  }
    ]
  },
  {
    "d": 3
  },
  {
    "e": [
  {
    "f": 4
  },
  {
    "g": 5
  }
    ]
  }
]
"""


def test_a_cut_in_the_wrong_place_cannot_go_unnoticed(tmp_path: Path) -> None:
    """A hand-edited file can hold the separator text inside an item: a part cut there does not
    decode (PartUnreadable), and the reader of the whole file still reads every item."""
    from benchreg.core.reader import PartUnreadable, iter_list_records, list_parts

    path = tmp_path / "a.json"
    path.write_text(NESTED_AT_THE_TOP_INDENT)
    whole = json.loads(NESTED_AT_THE_TOP_INDENT)
    unreadable = 0
    for k in range(1, 20):
        parts = list_parts(path, [k, 20 - k])
        assert parts is not None
        try:
            assert _part_items(parts) == whole
        except PartUnreadable:
            unreadable += 1
    assert unreadable > 0  # some cut did land inside an item
    for chunk in (3, 20, 64, 1 << 20):
        assert [r.data for r in iter_list_records(path, chunk_chars=chunk)] == whole


def test_random_pretty_lists_read_the_same_in_parts(tmp_path: Path) -> None:
    import random

    from benchreg.core.reader import list_parts

    rng = random.Random(7)

    def value(depth: int):
        kind = rng.randrange(6 if depth < 3 else 3)
        if kind == 0:
            return rng.choice([None, True, 0, -1.5, 1e300, 2**70, "x", "é, }\n ]", ""])
        if kind == 1:
            return rng.uniform(-1e6, 1e6)
        if kind == 2:
            return "".join(rng.choice('ab:{}[],"\\ \t中') for _ in range(rng.randrange(8)))
        if kind == 3:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {f"k{j}": value(depth + 1) for j in range(rng.randrange(4))}

    path = tmp_path / "a.json"
    for _ in range(60):
        items = [{"id": i, "v": value(0)} for i in range(rng.randrange(2, 30))]
        indent = rng.choice([None, 1, 2, 3])
        path.write_text(json.dumps(items, indent=indent, ensure_ascii=False))
        parts = list_parts(path, [rng.uniform(0.5, 2) for _ in range(rng.randrange(1, 5))])
        assert parts is not None
        assert _part_items(parts, rng.choice([7, 50, 1 << 20])) == items
