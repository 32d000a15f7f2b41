"""One record reader for every family: JSON Lines or a JSON list, with exact error locations.

Every object is checked for duplicate keys (``{"id": 1, "id": 2}`` is an error, not silently the
last value), every error names ``file:line`` (JSON Lines) or ``file[#i]`` (an item of a JSON
list), and :func:`index_by_id` rejects a repeated id naming both places.

JSON is decoded by jiter (pydantic's parser, with its repeated-key check; equal short strings
become one object); whatever it refuses is decoded again by the standard library's ``json`` with
a repeated-key hook, which names the problem and its column, or gives the value where ``json``
accepts more (a lone surrogate, nesting beyond 200 levels). Lines of a JSON Lines file end at
``\\n`` (a ``\\r`` before it is JSON white space); blank lines are skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jiter

from benchreg.core.errors import BenchregError, at
from benchreg.core.io import read_text

CHUNK_BYTES = 1 << 22  # a JSON Lines file is read this many bytes at a time


@dataclass(frozen=True, slots=True)
class Record:
    where: str  # file:line, or file[#i] for an item of a JSON list
    data: Any  # the decoded value; None when `error` is set
    error: str | None = None  # why the record could not be decoded (lenient reading only)


class DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r} in one JSON object")
        self.key = key


def strict_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that rejects a key given twice in one object."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return obj


def decode(data: bytes) -> Any:
    """One JSON value of ``data`` (UTF-8), keys checked; raises ValueError (a JSONDecodeError,
    a DuplicateKeyError, a UnicodeDecodeError, an overlong integer) naming the problem."""
    try:
        return jiter.from_json(data, catch_duplicate_keys=True, cache_mode="all")
    except ValueError:
        return json.loads(data.decode("utf-8"), object_pairs_hook=strict_object)


def loads(text: str) -> Any:
    """``json.loads`` that rejects duplicate keys (raises DuplicateKeyError or JSONDecodeError)."""
    return decode(text.encode("utf-8", "surrogatepass"))


def read_json_strict(path: Path) -> Any:
    """A whole JSON document; malformed JSON or a duplicate key is an error at file:line."""
    try:
        data = path.read_bytes()
    except OSError:
        data = b""
    if data:
        try:
            return jiter.from_json(data, catch_duplicate_keys=True, cache_mode="all")
        except ValueError:
            pass  # located below
    text = read_text(path)  # names a missing, unreadable or non-UTF-8 file
    try:
        return json.loads(text, object_pairs_hook=strict_object)
    except json.JSONDecodeError as exc:
        raise BenchregError(
            f"malformed JSON ({exc.msg}, column {exc.colno})", where=at(path, exc.lineno)
        ) from None
    except DuplicateKeyError as exc:
        where, item = _item_of_repeated_key(path, text)
        raise BenchregError(f"{exc}{item}", where=where, fix="give every key once") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise BenchregError(f"unreadable JSON value ({exc})", where=path) from None


def _item_of_repeated_key(path: Path, text: str) -> tuple[str, str]:
    """Where the repeated key of a JSON list lies: the line its item starts at, and which item
    (the file itself for any other document)."""
    decoder = json.JSONDecoder(object_pairs_hook=strict_object)
    position = len(text) - len(text.lstrip())
    if not text.startswith("[", position):
        return str(path), ""
    position, index = position + 1, 0
    while True:
        position = len(text) - len(text[position:].lstrip(" \t\n\r,"))
        try:
            _, position_after = decoder.raw_decode(text, position)
        except DuplicateKeyError:
            return at(path, text.count("\n", 0, position) + 1), f" (item #{index})"
        except ValueError:
            return str(path), ""
        position, index = position_after, index + 1


def read_records(path: Path, *, lenient: bool = False, lines: bool | None = None) -> list[Record]:
    """The records of a `.jsonl` file (one JSON value per line; blank lines skipped) or of a JSON
    file holding a list. With ``lenient``, an undecodable line becomes a Record with ``error``
    instead of stopping the read (a predictions file counts such a line invalid). ``lines``
    overrides the suffix (PromptCBLUE's `dev.json` is JSON Lines)."""
    if path.is_dir():
        raise BenchregError("expected a file, found a folder", where=path)
    if not (path.suffix == ".jsonl" if lines is None else lines):
        return list(iter_list_records(path))
    return [
        Record(at(path, number), value, error)
        for number, value, error in json_lines(path, lenient=lenient)
    ]


def iter_list_records(path: Path) -> Iterator[Record]:
    """The items of a file holding a JSON list, as :func:`read_records` gives them, handed out
    one at a time and dropped here as they go: the caller alone keeps what it wants of each.
    A pretty-printed list is decoded a buffer of items at a time (:func:`_item_buffers`), so a
    large file's text, its decoded items and what the caller builds from them are not all held
    at once; any other list, or one that does not decode so, is decoded whole."""
    done = 0
    try:
        for items in _item_buffers(path):
            for position, item in enumerate(items):
                items[position] = None
                yield Record(f"{path}[#{done}]", item)
                done += 1
        return
    except _NotCut:
        pass  # the whole file, from the item after those handed out (or its located error)
    data = read_json_strict(path)
    if not isinstance(data, list):
        raise BenchregError(
            f"expected a JSON list of records, found a JSON {type(data).__name__}",
            where=path,
            fix="write a list `[...]`, or one record per line in a .jsonl file",
        )
    for index, item in enumerate(data):
        data[index] = None
        if index >= done:
            yield Record(f"{path}[#{index}]", item)


class _NotCut(Exception):
    """The list is not read a buffer at a time: it is decoded whole."""


def _item_buffers(path: Path) -> Iterator[list[Any]]:
    """The items of a pretty-printed JSON list (``json.dumps(items, indent=...)``), a buffer of
    whole items at a time. Its top-level items end with ``"\\n" + indent + "},"``, a text that
    lies nowhere else in such a file (a JSON string holds no raw line break, and deeper objects
    close with more indentation). A cut anywhere else (a hand-edited file) leaves an object open,
    so that buffer does not decode: :class:`_NotCut`, and the file is decoded whole."""
    with path.open("rb") as handle:
        buffer = handle.read(max(CHUNK_BYTES, 1 << 12))  # at least the first item's opening
        start = _FIRST_ITEM.match(buffer)
        if start is None:
            raise _NotCut
        token = b"\n" + start.group(1) + b"},"
        buffer = buffer[start.end() - 1 :]  # from the first item's "{"
        while more := handle.read(CHUNK_BYTES):
            buffer += more
            cut = buffer.rfind(token)
            if cut >= 0:
                yield _decoded_items(buffer[: cut + len(token) - 1])
                buffer = buffer[cut + len(token) :]
    last = buffer.rstrip(b" \t\r\n")
    if not last.endswith(b"]"):
        raise _NotCut
    yield _decoded_items(last[:-1])


_FIRST_ITEM = re.compile(rb"[ \t\r\n]*\[[ \t\r]*\n([ \t]*)\{")


def _decoded_items(text: bytes) -> list[Any]:
    try:
        items = jiter.from_json(b"[" + text + b"]", catch_duplicate_keys=True, cache_mode="all")
    except ValueError:
        raise _NotCut from None
    return items  # type: ignore[no-any-return]


def json_lines(path: Path, *, lenient: bool = False) -> Iterator[tuple[int, Any, str | None]]:
    """``(line number, value, error)`` of every non-blank line of a JSON Lines file: what
    :func:`read_records` holds, without a Record per line. A line that does not decode stops
    the read with its located error, or with ``lenient`` gives ``error`` (value None)."""
    decode = jiter.from_json
    for number, _, line in _lines(path):
        try:
            yield number, decode(line, catch_duplicate_keys=True, cache_mode="all"), None
        except ValueError:
            value, error = _located(path, number, line, lenient)
            yield number, value, error


@dataclass(frozen=True, slots=True)
class Line:
    """A non-blank line of a JSON Lines file: where it is (its number, and its bytes
    ``offset:offset + size`` in the file) and its value, or why it has none (lenient)."""

    number: int
    offset: int
    size: int
    value: Any
    error: str | None = None


def json_line_spans(path: Path, *, lenient: bool = False) -> Iterator[Line]:
    """:func:`json_lines` with each line's place in the file."""
    for number, offset, line in _lines(path):
        try:
            value = jiter.from_json(line, catch_duplicate_keys=True, cache_mode="all")
            error = None
        except ValueError:
            value, error = _located(path, number, line, lenient)
        yield Line(number, offset, len(line), value, error)


def _located(path: Path, number: int, line: bytes, lenient: bool) -> tuple[Any, str | None]:
    """A line jiter refused, decoded by ``json`` with the repeated-key hook: its value where
    ``json`` takes it, else its located error (raised; with ``lenient``, returned)."""
    try:
        return json.loads(line.decode("utf-8"), object_pairs_hook=strict_object), None
    except ValueError as exc:
        reason = _reason(exc)
        if not lenient:
            fix = "save it as UTF-8" if "UTF-8" in reason else "one JSON value per line"
            raise BenchregError(reason, where=at(path, number), fix=fix) from None
        return None, reason


def _reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed JSON ({exc.msg}, column {exc.colno})"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.start} of the line)"
    return str(exc)


def _lines(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """``(line number, offset, bytes)`` of the non-blank lines, read a chunk at a time."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise BenchregError("file not found", where=path) from None
    except IsADirectoryError:
        raise BenchregError("expected a file, found a folder", where=path) from None
    except OSError as exc:
        raise BenchregError(f"cannot read the file ({exc.strerror})", where=path) from None
    number, offset, rest = 0, 0, b""
    with handle:
        while chunk := handle.read(CHUNK_BYTES):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                number += 1
                if line.strip():
                    yield number, offset, line
                offset += len(line) + 1
    if rest.strip():
        yield number + 1, offset, rest


def index_by_id(records: Iterable[Record], key: str, *, what: str = "record") -> dict[str, Record]:
    """``{id: record}``; a record that is not an object, lacks a string ``key`` or repeats an id
    is one clear error naming where."""
    ids = IdIndex(key, what=what)
    for record in records:
        ids.add(record)
    return ids.records


def index_lines(path: Path, key: str, *, what: str = "record") -> dict[str, tuple[int, Any]]:
    """``index_by_id(read_records(path), key, what=what)`` for a JSON Lines file, as ``{id:
    (line number, value)}``: the same checks, errors and order of errors, without a Record (and
    its ``file:line`` text) per line."""
    if path.is_dir():
        raise BenchregError("expected a file, found a folder", where=path)
    lines = list(json_lines(path))  # every line decoded first, as read_records does
    out: dict[str, tuple[int, Any]] = {}
    for number, data, _ in lines:
        if not isinstance(data, dict):
            raise BenchregError(f"a {what} must be a JSON object", where=at(path, number))
        value = data.get(key)
        if not isinstance(value, str) or not value:
            raise BenchregError(
                f"a {what} needs a non-empty string {key!r}", where=at(path, number)
            )
        if value in out:
            raise BenchregError(
                f"duplicate {key} {value!r} (first at {at(path, out[value][0])})",
                where=at(path, number),
                fix=f"give every {what} its own {key}",
            )
        out[value] = (number, data)
    return out


class IdIndex:
    """:func:`index_by_id` one record at a time (for records read as a stream); with
    ``keep=False`` only the ids and where they were are kept, not the records."""

    def __init__(self, key: str, *, what: str = "record", keep: bool = True) -> None:
        self.key = key
        self.what = what
        self.keep = keep
        self.records: dict[str, Record] = {}
        self.first: dict[str, str] = {}  # id -> where it was first given

    def add(self, record: Record) -> str:
        """The record's id, once checked (raises BenchregError naming where)."""
        key, what, data = self.key, self.what, record.data
        if not isinstance(data, dict):
            raise BenchregError(f"a {what} must be a JSON object", where=record.where)
        value = data.get(key)
        if not isinstance(value, str) or not value:
            raise BenchregError(f"a {what} needs a non-empty string {key!r}", where=record.where)
        if value in self.first:
            raise BenchregError(
                f"duplicate {key} {value!r} (first at {self.first[value]})",
                where=record.where,
                fix=f"give every {what} its own {key}",
            )
        self.first[value] = record.where
        if self.keep:
            self.records[value] = record
        return value
