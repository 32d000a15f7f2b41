"""The reader's fast paths (jiter, orjson) give what its own `json` path gives: values, line
numbers and errors (edge cases; each reader function is run with the fast path and without it)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from benchreg.core import fastjson, reader
from benchreg.core.errors import BenchregError
from benchreg.core.reader import read_json_strict, read_records, strict_object

DOCUMENTS = [
    '{"a": 1, "b": [1, 2.5, -0, -0.0, 1e5, 1E-7, true, false, null]}',
    "[" * 300 + "]" * 300,  # nesting orjson reads but does not write back, jiter refuses
    '{"a": ' + "[" * 300 + "]" * 300 + ', "a": 1}',
    '{"a": 1, "a": 2}',  # duplicate key
    '{"a": {"b": 1, "b": 1}}',  # nested duplicate
    '[{"k": "x"}, {"k": "y", "k": "z"}]',  # duplicate inside a list
    '{"a": "x:y:z", "b": {"c:d": ":"}}',  # colons inside strings
    '{"a": "\\u003a", "a": "x"}',  # escaped colon hiding a duplicate
    '{"a": "x", "a": "\\u003A"}',
    '{"a": "\\u003a"}',
    '{"n": 18446744073709551616}',  # beyond 64 bits: json keeps the int, orjson a float
    '{"n": -9223372036854775809}',
    '{"n": 18446744073709551615}',
    '{"n": 123456789012345678901234567890.5}',
    '{"s": "12345678901234567890"}',
    '{"x": NaN}',
    '{"x": 1e400}',
    '"\\ud800"',  # lone surrogate
    '"\\ud83d\\ude00"',
    '\ufeff{"a": 1}',  # BOM
    '{"a": "\u2028\u2029\x85"}',
    '{"a": 1,}',
    "[1, 2",
    "",
    "  ",
    '{"a": "é", "b": "中文：冒号"}',
    "[" * 3000 + "]" * 3000,
    "[" * 990 + "]" * 990,  # about Python's recursion limit
    '{"n": ' + "9" * 4300 + "}",  # Python's digit limit for int("...")
    '{"n": ' + "9" * 4301 + "}",
    '{"a": 1}\r\n',
]


LINES = [
    '{"a": 1, "b": "x:y"}',
    '{"a": [1, {"c": "d"}]}',
    "",
    "   ",
    "\xa0",  # blank to str.strip, not to bytes.strip
    '{"a": "\\u003a"}',
    '{"n": 123456789012345678901}',
    '{"a": "中：文", "b": null}',
    '{"a": "x:y\\n", "b": "\\u4e2d:", "c": [{"d": ":"}]}',
    '{"a": "\\u003a:", "b": "\\\\u003a"}',
    "[]",
    "3",
]
BAD_LINES = [
    '{"a": 1, "a": 2}',
    '{"a": {"b": 1, "b": 2}}',
    '{"a": "\\u003a", "a": "x"}',
    '{"a": "x", "a": "\\u003A"}',
    '{"a": "x:y", "a": "z"}',
    '[{"a": 1}, {"b": 2, "b": 3}]',
    "{oops}",
    '{"x": NaN}',
    '{"a": "\u2028"}',
    "\x0b",
    '{"a": 1}\r{"b": 2}',
    '{"n": ' + "9" * 4301 + "}",  # more digits than Python converts
]


ALL_DOCUMENTS = [*DOCUMENTS, *LINES, *BAD_LINES]


def _outcome(fn, arg):  # type: ignore[no-untyped-def]
    try:
        return ("ok", repr(fn(arg)))
    except ValueError as exc:  # JSONDecodeError, DuplicateKeyError, an int over Python's limit
        return ("error", type(exc).__name__, str(exc))
    except RecursionError:
        return ("error", "RecursionError")


@pytest.fixture
def without_fast_path(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A context in which the reader never takes the orjson path (its own `json` path only)."""
    from contextlib import contextmanager

    @contextmanager
    def off():  # type: ignore[no-untyped-def]
        with monkeypatch.context() as patch:
            patch.setattr(fastjson, "decode_bytes", lambda data: (False, None))
            patch.setattr(fastjson, "json_lines", lambda path: None)
            yield

    return off


@pytest.mark.parametrize("text", ALL_DOCUMENTS)
def test_loads_equals_the_json_path(text: str) -> None:
    def strict(text: str):  # type: ignore[no-untyped-def]
        return json.loads(text, object_pairs_hook=strict_object)

    assert _outcome(reader.loads, text) == _outcome(strict, text)


def _random_number(rng: random.Random) -> str:
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 40)))
    kind = rng.random()
    if kind < 0.25:
        return repr(rng.uniform(-1e6, 1e6))
    if kind < 0.5:
        return repr(rng.random() * 10 ** rng.randint(-325, 308))  # subnormals to the largest
    if kind < 0.8:  # more digits than a double holds, with or without an exponent
        exponent = f"e{rng.randint(-340, 320)}" if rng.random() < 0.5 else ""
        return f"{rng.choice(['', '-'])}{int(digits[:4])}.{digits}{exponent}"
    return rng.choice(["", "-"]) + (digits.lstrip("0") or "0")  # ints of up to 40 digits


def test_documents_of_random_numbers_decode_as_json_does() -> None:
    """The fast decoder's numbers are `json`'s: ints of any length stay ints, floats round
    alike (values and types compared, 1 and 1.0 apart)."""
    rng = random.Random(23)
    for _ in range(200):
        numbers = [_random_number(rng) for _ in range(100)]
        text = "[" + ", ".join(numbers) + "]"
        fast, value = fastjson.decode_bytes(text.encode())
        expected = json.loads(text)
        assert fast, text
        assert [(type(v), repr(v)) for v in value] == [(type(v), repr(v)) for v in expected]


def test_plain_documents_take_the_fast_path() -> None:
    for text in ['{"a": 1, "b": [1, 2.5, -0.0, 1e400]}', '{"n": 18446744073709551616}', "[]"]:
        assert fastjson.decode_bytes(text.encode())[0], text
    for text in ['{"a": 1, "a": 2}', '"\\ud800"', "\ufeff[]", "[1,]"]:
        assert fastjson.decode_bytes(text.encode("utf-8", "surrogatepass")) == (False, None)


@pytest.mark.parametrize("text", ALL_DOCUMENTS)
def test_read_json_equals_the_json_path(tmp_path: Path, text: str, without_fast_path) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))

    def read():  # type: ignore[no-untyped-def]
        try:
            return ("ok", repr(read_json_strict(path)))
        except BenchregError as exc:
            return ("error", str(exc))
        except RecursionError:
            return ("error", "RecursionError")

    fast = read()
    with without_fast_path():
        assert fast == read()


def _read_lines(path: Path):  # type: ignore[no-untyped-def]
    try:
        return ("ok", repr([(r.where, r.data) for r in read_records(path, lines=True)]))
    except BenchregError as exc:
        return ("error", str(exc))


@pytest.mark.parametrize("chunk", [7, 64, 1 << 23])
def test_json_lines_equal_the_json_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, without_fast_path
) -> None:
    monkeypatch.setattr(fastjson, "CHUNK_BYTES", chunk)
    rng = random.Random(chunk)
    path = tmp_path / "rows.json"
    fast_reads = 0
    for trial in range(60):
        lines = [rng.choice(LINES) for _ in range(rng.randint(0, 12))]
        if trial % 3 == 0:
            lines.insert(rng.randint(0, len(lines)), rng.choice(BAD_LINES))
        newline = rng.choice(["\n", "\r\n"])
        text = newline.join(lines) + rng.choice(["", newline])
        path.write_text(text, encoding="utf-8", newline="")
        fast_reads += fastjson.json_lines(path) is not None
        fast = _read_lines(path)
        with without_fast_path():
            assert fast == _read_lines(path), repr(text)
    assert fast_reads >= 5  # the fast path was taken, not only the fallback


def test_json_lines_take_the_fast_path_on_plain_lines(tmp_path: Path) -> None:
    path = tmp_path / "rows.json"
    path.write_text('{"a": "x:y"}\n\n{"b": [1, 2]}\r\n', encoding="utf-8", newline="")
    assert fastjson.json_lines(path) == [(1, {"a": "x:y"}), (3, {"b": [1, 2]})]


def test_lines_orjson_cannot_prove_are_decoded_by_jiter(tmp_path: Path) -> None:
    """A chunk with a long integer or a NaN is still read on the fast path
    (jiter, values as `json` gives them); a repeated key anywhere still leaves the file to the
    core reader, which names its line."""
    path = tmp_path / "rows.jsonl"
    text = '{"n": 123456789012345678901}\n{"x": NaN, "y": {"z": 1}}\n'
    path.write_text(text, encoding="utf-8")
    fast = fastjson.json_lines(path)
    assert fast is not None
    assert repr(fast) == repr(
        [(n + 1, json.loads(line)) for n, line in enumerate(text.split("\n")[:2])]
    )
    assert type(fast[0][1]["n"]) is int
    path.write_text(text + '{"a": {"b": 1, "b": 2}}\n', encoding="utf-8")
    assert fastjson.json_lines(path) is None
    with pytest.raises(BenchregError, match=r"rows\.jsonl:3: duplicate key 'b'"):
        read_records(path)


def test_chunks_of_nested_objects_go_to_jiter_with_repeated_keys_still_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk whose first line holds nested objects (a MolP2S task line) is decoded by jiter,
    whose own check costs less there than orjson's values and their dump; the choice is made
    per chunk and changes no value: a repeated key on any line, nested or flat, still leaves
    the file to the core reader."""
    path = tmp_path / "rows.jsonl"
    nested = '{"id": "r1", "p": {"gap": {"value": 6.1}}, "c": ["CCO"]}\n{"id": "r2", "x": 1}\n'
    path.write_text(nested, encoding="utf-8")
    with monkeypatch.context() as patched:
        patched.setattr(fastjson, "_proven_lines", None)  # must not be called
        assert fastjson.json_lines(path) == [
            (n + 1, json.loads(line)) for n, line in enumerate(nested.splitlines())
        ]
    for text in (
        nested + '{"id": "r3", "x": 1, "x": 2}\n',  # nested first: jiter's check
        '{"id": "r0"}\n' + '{"id": "r1", "p": {"v": 1, "v": 2}}\n',  # flat first: the dump's
    ):
        path.write_text(text, encoding="utf-8")
        assert fastjson.json_lines(path) is None
        with pytest.raises(BenchregError, match=r"duplicate key"):
            read_records(path)


def test_an_escaped_colon_cannot_hide_a_repeated_key_of_another_line(tmp_path: Path) -> None:
    """The duplicate-key proof runs once per chunk of lines: a line whose escaped colon adds one
    to the dump's count must not make up for another line's dropped member."""
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": "\\u003a"}\n{"a": 1, "a": 2}\n', encoding="utf-8")
    assert fastjson.json_lines(path) is None  # left to the core reader, which names the line
    with pytest.raises(BenchregError, match=r"rows\.jsonl:2: duplicate key 'a'"):
        read_records(path)
    path.write_text('{"a": "\\u003a"}\n{"b": "x:y"}\n', encoding="utf-8")
    assert read_records(path)[0].data == {"a": ":"}


@pytest.mark.parametrize("chunk", [7, 64, 1 << 23])
def test_lines_between_two_line_starts_are_those_of_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """A file read as two ranges cut at the line start after any byte (a PromptCBLUE split
    decoded by two copies) gives the whole file's lines with their numbers, or None where the
    whole file's read does (a lone line break, a long number)."""
    monkeypatch.setattr(fastjson, "CHUNK_BYTES", chunk)
    rng = random.Random(chunk)
    path = tmp_path / "rows.json"
    for _ in range(40):
        lines = [rng.choice(LINES) for _ in range(rng.randint(0, 12))]
        newline = rng.choice(["\n", "\r\n"])
        path.write_text(
            newline.join(lines) + rng.choice(["", newline]), encoding="utf-8", newline=""
        )
        whole, size = fastjson.json_lines(path), path.stat().st_size
        for offset in {0, 1, size // 2, size - 1, size, rng.randint(0, size)}:
            cut = fastjson.line_start_after(path, offset)
            assert cut == size or cut == 0 or path.read_bytes()[cut - 1 : cut] == b"\n"
            assert cut >= offset or (cut == size and offset >= size)
            halves = [fastjson.json_lines_between(path, *r) for r in [(0, cut), (cut, size)]]
            if whole is not None:
                assert halves[0] is not None and halves[1] is not None
                assert halves[0] + halves[1] == whole, (offset, cut)
