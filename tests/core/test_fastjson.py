"""The orjson fast path gives the core reader's values, line numbers and errors (edge cases)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from benchreg.core import fastjson
from benchreg.core.errors import BenchregError
from benchreg.core.reader import DuplicateKeyError, read_json_strict, read_records
from benchreg.core.reader import loads as strict_loads

DOCUMENTS = [
    '{"a": 1, "b": [1, 2.5, -0, -0.0, 1e5, 1E-7, true, false, null]}',
    "[" * 300 + "]" * 300,  # nesting orjson reads but does not write back
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
]


ALL_DOCUMENTS = [*DOCUMENTS, *LINES, *BAD_LINES]


def _outcome(fn, arg):  # type: ignore[no-untyped-def]
    try:
        return ("ok", repr(fn(arg)))
    except (json.JSONDecodeError, DuplicateKeyError) as exc:
        return ("error", type(exc).__name__, str(exc))
    except RecursionError:
        return ("error", "RecursionError")


@pytest.mark.parametrize("text", ALL_DOCUMENTS)
def test_loads_equals_the_core_reader(text: str) -> None:
    assert _outcome(fastjson.loads, text) == _outcome(strict_loads, text)


@pytest.mark.parametrize("text", ALL_DOCUMENTS)
def test_read_json_equals_the_core_reader(tmp_path: Path, text: str) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))

    def read(reader):  # type: ignore[no-untyped-def]
        try:
            return ("ok", repr(reader(path)))
        except BenchregError as exc:
            return ("error", str(exc))
        except RecursionError:
            return ("error", "RecursionError")

    assert read(fastjson.read_json) == read(read_json_strict)


def _read_both(path: Path):  # type: ignore[no-untyped-def]
    def core():  # type: ignore[no-untyped-def]
        return [(int(r.where.rsplit(":", 1)[1]), r.data) for r in read_records(path, lines=True)]

    out = []
    for reader in (lambda: fastjson.json_lines(path), core):
        try:
            out.append(("ok", repr(reader())))
        except BenchregError as exc:
            out.append(("error", str(exc)))
    return out


@pytest.mark.parametrize("chunk", [7, 64, 1 << 23])
def test_json_lines_equal_the_core_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(fastjson, "CHUNK_BYTES", chunk)
    rng = random.Random(chunk)
    path = tmp_path / "rows.json"
    for trial in range(60):
        lines = [rng.choice(LINES) for _ in range(rng.randint(0, 12))]
        if trial % 3 == 0:
            lines.insert(rng.randint(0, len(lines)), rng.choice(BAD_LINES))
        newline = rng.choice(["\n", "\r\n"])
        text = newline.join(lines) + rng.choice(["", newline])
        path.write_text(text, encoding="utf-8", newline="")
        fast, core = _read_both(path)
        assert fast == core, repr(text)


def test_json_lines_take_the_fast_path_on_plain_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rows.json"
    path.write_text('{"a": "x:y"}\n\n{"b": [1, 2]}\r\n', encoding="utf-8", newline="")

    def no_core(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the core reader was used")

    monkeypatch.setattr(fastjson, "read_records", no_core)
    monkeypatch.setattr(fastjson, "strict_loads", no_core)
    assert fastjson.json_lines(path) == [(1, {"a": "x:y"}), (3, {"b": [1, 2]})]
