"""One record reader for every family: JSON Lines or a JSON list, with exact error locations.

Every object is checked for duplicate keys (``{"id": 1, "id": 2}`` is an error, not silently the
last value), every error names ``file:line`` (JSON Lines) or ``file[#i]`` (an item of a JSON
list), and :func:`index_by_id` rejects a repeated id naming both places.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchreg.core import fastjson
from benchreg.core.errors import BenchregError, at
from benchreg.core.io import read_text


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


def loads(text: str) -> Any:
    """``json.loads`` that rejects duplicate keys (raises DuplicateKeyError or JSONDecodeError)."""
    fast, value = fastjson.decode_bytes(text.encode("utf-8", "surrogatepass"))
    return value if fast else json.loads(text, object_pairs_hook=strict_object)


def read_json_strict(path: Path) -> Any:
    """A whole JSON document; malformed JSON or a duplicate key is an error at file:line."""
    try:
        data = path.read_bytes()
    except OSError:
        data = b""  # read_text below names the problem
    if data:
        with gc_paused():
            fast, value = fastjson.decode_bytes(data)
        if fast:
            return value
    text = read_text(path)
    try:
        with gc_paused():
            return json.loads(text, object_pairs_hook=strict_object)
    except json.JSONDecodeError as exc:
        raise BenchregError(
            f"malformed JSON ({exc.msg}, column {exc.colno})", where=at(path, exc.lineno)
        ) from None
    except DuplicateKeyError as exc:
        raise BenchregError(str(exc), where=path, fix="give every key once") from None


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while bulk data is decoded or validated.

    Decoded JSON holds no reference cycles, but every container it allocates counts towards the
    collector's thresholds, so reading 100,000 records runs several full collections over a
    growing heap (40% of a 100k MolP2S load). Reference counting still frees everything; the
    collector resumes (if it was on) when the block ends.

    When it resumes, what the block allocated is moved to the collector's permanent generation
    (``gc.freeze()``, O(1)): otherwise the next young collection would walk all of it at once.
    Frozen objects are still freed by reference counting; only a reference cycle that became
    garbage inside the block is never collected (bulk data holds none)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()


def read_records(path: Path, *, lenient: bool = False, lines: bool | None = None) -> list[Record]:
    """The records of a `.jsonl` file (one JSON value per line; blank lines skipped) or of a JSON
    file holding a list. With ``lenient``, an undecodable line becomes a Record with ``error``
    instead of stopping the read (a predictions file counts such a line invalid). ``lines``
    overrides the suffix (PromptCBLUE's `dev.json` is JSON Lines)."""
    if path.is_dir():
        raise BenchregError("expected a file, found a folder", where=path)
    if not (path.suffix == ".jsonl" if lines is None else lines):
        data = read_json_strict(path)
        if not isinstance(data, list):
            raise BenchregError(
                f"expected a JSON list of records, found a JSON {type(data).__name__}",
                where=path,
                fix="write a list `[...]`, or one record per line in a .jsonl file",
            )
        return [Record(f"{path}[#{i}]", item) for i, item in enumerate(data)]
    with gc_paused():
        return [
            Record(at(path, number), value, error)
            for number, value, error in json_lines(path, lenient=lenient)
        ]


def iter_list_records(path: Path, *, chunk_chars: int = 1 << 22) -> Iterator[Record]:
    """The items of a file holding a JSON list, as :func:`read_records` gives them, decoded one
    at a time from a read buffer of ``chunk_chars``: memory stays one item plus the buffer, not
    the whole text and every decoded item at once (a 300 MB file decodes to over 1 GB).

    On anything but a well-formed list the file is read again by :func:`read_records`, so the
    error (and where it is) is the same; items yielded before it stay yielded."""
    try:
        yield from _list_items(path, chunk_chars)
    except _RepeatedKey as exc:  # located here: a whole-file read cannot name the item
        raise BenchregError(
            f"duplicate key {exc.key!r} in one JSON object of item #{exc.index} (the item "
            "starts at this line)",
            where=at(path, _line_at(path, exc.offset)),
            fix="give every key once",
        ) from None
    except (_NotStreamable, json.JSONDecodeError, DuplicateKeyError, UnicodeDecodeError):
        read_records(path, lines=False)  # raises the located error
        raise AssertionError(f"{path}: streaming and whole-file reads disagree") from None


class _NotStreamable(Exception):
    pass


class _RepeatedKey(Exception):
    def __init__(self, key: str, index: int, offset: int) -> None:
        self.key, self.index, self.offset = key, index, offset  # offset: chars before the item


def _line_at(path: Path, offset: int) -> int:
    """The line number of the character at ``offset`` (universal newlines, as it was read)."""
    line = 1
    with path.open(encoding="utf-8") as handle:
        while offset > 0 and (chunk := handle.read(min(offset, 1 << 22))):
            line += chunk.count("\n")
            offset -= len(chunk)
    return line


_SPACE = re.compile(r"[ \t\n\r]*")
_AFTER_ITEM = frozenset(" \t\n\r,]")


def _list_items(path: Path, chunk_chars: int) -> Iterator[Record]:
    decoder = json.JSONDecoder(object_pairs_hook=strict_object)
    decode = decoder.raw_decode
    try:
        handle = path.open(encoding="utf-8")
    except OSError:
        raise _NotStreamable from None
    with handle:
        buf, pos, eof, dropped = "", 0, False, 0

        def fill() -> None:  # drop what was consumed, append the next chunk
            nonlocal buf, pos, eof, dropped
            more = handle.read(chunk_chars)
            eof = not more
            dropped += pos
            buf, pos = buf[pos:] + more, 0

        def skip_space() -> str:  # the next non-space character ("" at the end of the file)
            nonlocal pos
            while True:
                pos = _SPACE.match(buf, pos).end()  # type: ignore[union-attr]
                if pos < len(buf) or eof:
                    return buf[pos : pos + 1]
                fill()

        fill()
        if skip_space() != "[":
            raise _NotStreamable
        pos += 1
        if skip_space() == "]":
            pos += 1
        else:
            index = 0
            layout: _Layout | None = None
            while True:
                group = layout.group(decoder, buf, pos) if layout else None
                if group is not None:
                    items, end = group
                elif layout is not None and layout.failed:
                    layout = None  # not this file's layout after all: one item at a time
                    continue
                else:
                    while True:
                        try:
                            item, end = decode(buf, pos)
                        except DuplicateKeyError as exc:
                            raise _RepeatedKey(exc.key, index, dropped + pos) from None
                        except json.JSONDecodeError:
                            if eof:
                                raise
                            fill()  # an item cut by the end of the buffer: read on
                            continue
                        if eof or (end < len(buf) and buf[end] in _AFTER_ITEM):
                            break
                        fill()  # "3.25" of a number "3.25e10" cut by the end of the buffer
                    items = [item]
                    if index == 0:
                        layout = _Layout.learn(buf, end)
                for position, item in enumerate(items):
                    items[position] = None  # the caller alone keeps what it wants of the item
                    yield Record(f"{path}[#{index}]", item)
                    index += 1
                pos = end
                token = skip_space()
                pos += 1
                if token == "]":
                    break
                if token != ",":
                    raise _NotStreamable
                skip_space()
        if skip_space() != "":
            raise _NotStreamable  # text after the list


class _Layout:
    r"""How a pretty-printed list separates its items, learnt from its first item: the item's last
    line plus the separator, e.g. ``"\n  },\n  {"`` (json.dumps with indent=2). In such a file
    that text occurs only between items (deeper objects close with more indentation, and a JSON
    string holds no raw line break), so everything of a read buffer up to its last occurrence is
    decoded in one call: one decoder pass over many items (orjson's, when
    :func:`benchreg.core.fastjson.decode_bytes` can prove it gives what ``json`` would), and the
    decoder's key memo shares the key strings of all of them (one "yield", not one per item).

    The guess is checked, not trusted: the slice decodes as a list only if it ends exactly after
    an item (a slice ending inside an item leaves an object or string open). On any failure the
    reader goes back to one item at a time, which also locates a real error."""

    __slots__ = ("close", "failed", "token")

    def __init__(self, token: str, close: int) -> None:
        self.token = token
        self.close = close  # chars of the token that belong to the item before it
        self.failed = False

    @classmethod
    def learn(cls, buf: str, end: int) -> _Layout | None:
        line = buf.rfind("\n", 0, end)
        if line < 0 or buf[end - 1] != "}" or buf[line:end].strip() != "}":
            return None
        match = _SEPARATOR.match(buf, end)
        if match is None:
            return None
        return cls(buf[line : match.end()], end - line)

    def group(
        self, decoder: json.JSONDecoder, buf: str, pos: int
    ) -> tuple[list[Any], int] | None:
        cut = buf.rfind(self.token, pos)
        if cut <= pos:
            return None
        end = cut + self.close
        text = f"[{buf[pos:end]}]"
        fast, items = fastjson.decode_bytes(text.encode("utf-8", "surrogatepass"))
        if not fast:
            try:
                items = decoder.decode(text)
            except (json.JSONDecodeError, DuplicateKeyError):
                self.failed = True
                return None
        return items, end


_SEPARATOR = re.compile(r"[ \t\r]*,[ \t\n\r]*\{")


def text_lines(path: Path, *, chunk_chars: int = 1 << 22) -> Iterator[str]:
    """``read_text(path).splitlines()``, read in chunks: never the whole text and all its lines
    at once. Errors (missing file, not UTF-8, ...) are read_text's, located the same way."""
    try:
        with path.open(encoding="utf-8") as handle:  # universal newlines, as read_text
            rest = ""
            while chunk := handle.read(chunk_chars):
                text = rest + chunk
                lines = text.splitlines()
                # a last line not ended yet goes on in the next chunk (a chunk never ends in
                # the "\r" of "\r\n": universal newlines turn both into "\n")
                rest = "" if text[-1] in _LINE_BREAKS else lines.pop()
                yield from lines
            if rest:
                yield rest
    except (OSError, UnicodeDecodeError):
        read_text(path)  # raises the located error
        raise


_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")  # those of str.splitlines


def json_lines(path: Path, *, lenient: bool = False) -> Iterator[tuple[int, Any, str | None]]:
    """``(line number, value, error)`` of every non-blank line of a JSON Lines file: what
    :func:`read_records` holds, without a Record per line. A line that does not decode stops
    the read with its located error, or with ``lenient`` gives ``error`` (value None)."""
    fast = fastjson.json_lines(path)
    if fast is not None:
        for number, value in fast:
            yield number, value, None
        return
    decode = _LineDecoder()
    for number, line in enumerate(text_lines(path), start=1):
        if not line.strip():
            continue
        try:
            value = decode(line)
        except (json.JSONDecodeError, DuplicateKeyError) as exc:
            reason = (
                f"malformed JSON ({exc.msg}, column {exc.colno})"
                if isinstance(exc, json.JSONDecodeError)
                else str(exc)
            )
            if not lenient:
                raise BenchregError(
                    reason, where=at(path, number), fix="each line must be one JSON object"
                ) from None
            yield number, None, reason
            continue
        yield number, value, None


class _LineDecoder:
    """:func:`loads` for one line, without a Python call per object on flat lines.

    Every member of a JSON object has one `:` outside strings, so a line holds at least as many
    colons as members, and its decoded value at most ``members - repeated keys`` keys. A line
    decoded by the C decoder into an object with as many keys as the line has colons (or into a
    list with no colon) therefore repeats no key, nor holds any nested object. Any other object or
    list line (nested objects, a colon inside a string, a duplicate) is decoded again with the
    per-object check (:func:`strict_object`), which names the repeated key. When most lines of a
    file need that (nested records), the decoder switches to the per-object check alone.
    """

    __slots__ = ("checked", "lines")

    def __init__(self) -> None:
        self.lines = 0  # lines decoded on the fast path
        self.checked = 0  # of which decoded again with the per-object check

    def __call__(self, line: str) -> Any:
        if self.checked > 16 and 2 * self.checked > self.lines:
            return json.loads(line, object_pairs_hook=strict_object)
        value = json.loads(line)
        self.lines += 1
        kind = type(value)
        if kind is dict:
            if line.count(":") == len(value):
                return value
        elif kind is not list or ":" not in line:
            return value  # a scalar holds no object; a list without a colon neither
        self.checked += 1
        return json.loads(line, object_pairs_hook=strict_object)


def index_by_id(records: Iterable[Record], key: str, *, what: str = "record") -> dict[str, Record]:
    """``{id: record}``; a record that is not an object, lacks a string ``key`` or repeats an id
    is one clear error naming where."""
    ids = IdIndex(key, what=what)
    for record in records:
        ids.add(record)
    return ids.records


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
