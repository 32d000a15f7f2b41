"""One record reader for every family: JSON Lines or a JSON list, with exact error locations.

Every object is checked for duplicate keys (``{"id": 1, "id": 2}`` is an error, not silently the
last value), every error names ``file:line`` (JSON Lines) or ``file[#i]`` (an item of a JSON
list), and :func:`index_by_id` rejects a repeated id naming both places.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

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
    except ValueError as exc:  # an integer of more digits than Python converts
        raise BenchregError(f"unreadable JSON value ({exc})", where=path) from None


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
    """The items of a file holding a JSON list, as :func:`read_records` gives them, decoded a
    read buffer of ``chunk_chars`` at a time: memory stays one buffer of items, not the whole
    text and every decoded item at once (a 300 MB file decodes to over 1 GB).

    A pretty-printed list (``json.dumps(..., indent=...)``) is decoded a buffer of whole items
    per decoder call (:func:`iter_list_part` over the whole file); any other list, or one that
    this fast path cannot read, one item at a time. On anything but a well-formed list the file
    is read again by :func:`read_records`, so the error (and where it is) is the same; items
    yielded before it stay yielded."""
    done = 0
    whole = list_parts(path, [1.0])
    if whole is not None:
        try:
            for record in iter_list_part(whole[0], chunk_bytes=chunk_chars, label=str(path)):
                yield record
                done += 1
            return
        except PartUnreadable:
            pass  # one item at a time from the start (exact errors), after those yielded
    try:
        for index, record in enumerate(_list_items(path, chunk_chars)):
            if index >= done:
                yield record
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
            while True:
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
                    except ValueError:  # an overlong integer: the whole-file read names it
                        raise _NotStreamable from None
                    if eof or (end < len(buf) and buf[end] in _AFTER_ITEM):
                        break
                    fill()  # "3.25" of a number "3.25e10" cut by the end of the buffer
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


@dataclass(frozen=True, slots=True)
class ListPart:
    r"""Whole items of a JSON list file: its bytes ``start:end``, from the ``{`` of one item to
    the ``}`` of another, items separated by ``token``, of which the first ``close`` bytes end an
    item and whose byte ``open`` is the ``{`` of the next one.

    A pretty-printed list (``json.dumps(..., indent=2)``) has the token ``b"\n  },\n  {"`` (the
    last line of an item and the separator): such a file holds that text only between items, as
    an object nested deeper closes with more indentation and a JSON string holds no raw line
    break. A compact list (``json.dumps(...)``, one line) has the token ``b'}, {"id":'``: the
    separator and the first key of every item (learnt from the first item). That text cannot
    lie inside a JSON string (a raw quote ends a string, and no letter may follow); it can lie
    between two objects nested in an item whose first key is the same. A cut there, or anywhere
    a hand-edited file holds the token, is checked, not trusted: a part whose text is not a list
    of items does not decode (:func:`iter_list_part`), and the items of parts that each decode
    are exactly those of the whole file."""

    path: Path
    start: int
    end: int
    token: bytes
    close: int
    open: int = -1  # -1: the last byte of the token

    @property
    def opening(self) -> int:
        return self.open if self.open >= 0 else len(self.token) - 1


def list_parts(
    path: Path, shares: Sequence[float], *, probe_chars: int = 1 << 22
) -> list[ListPart] | None:
    """``path`` cut at item boundaries into ``len(shares)`` parts of about these relative sizes
    (fewer when a stretch of the file holds no boundary), or None when it is not a list of
    objects (pretty-printed or compact, :class:`ListPart`) whose layout shows in its first
    ``probe_chars``."""
    try:
        with path.open("rb") as handle:
            head = handle.read(probe_chars)
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - (1 << 16)))
            tail = handle.read()
        text = head.decode("utf-8", "ignore")  # a cut multi-byte character at its end
        bracket = _SPACE.match(text).end()  # type: ignore[union-attr]
        first = _SPACE.match(text, bracket + 1).end()  # type: ignore[union-attr]
        if text[bracket : bracket + 1] != "[" or not text[:first].isascii():
            return None
        _, end = json.JSONDecoder(object_pairs_hook=strict_object).raw_decode(text, first)
    except (OSError, ValueError):  # JSONDecodeError, DuplicateKeyError, an overlong integer
        return None  # the reader's one-item-at-a-time path names any problem
    layout = _layout(text, first, end)
    closing = tail.rstrip(b" \t\n\r")
    if layout is None or layout[0] not in head or not closing.endswith(b"]"):
        return None
    token, close, opening = layout
    size = path.stat().st_size
    bounds = [first]  # ASCII before it: characters are bytes
    with path.open("rb") as handle:
        for share in itertools.accumulate(shares[:-1]):
            target = max(int(size * share / sum(shares)), bounds[-1])
            found = _find(handle, token, target, probe_chars)
            if found >= 0:
                bounds += [found + close, found + opening]  # "...}" | "{..."
    bounds.append(size - len(tail) + len(closing[:-1].rstrip(b" \t\n\r")))
    return [
        ListPart(path, bounds[i], bounds[i + 1], token, close, opening)
        for i in range(0, len(bounds), 2)
    ]


_SEPARATOR = re.compile(r"[ \t\r]*,[ \t\n\r]*\{")
_FIRST_KEY = re.compile(r'\{[ \t\n\r]*"(?:[^"\\\n]|\\.)*"[ \t\n\r]*:')  # `{"key":`


def _layout(text: str, first: int, end: int) -> tuple[bytes, int, int] | None:
    """The token, close and open of :class:`ListPart`, from the first item (``first:end``)."""
    if text[end - 1] != "}":
        return None
    match = _SEPARATOR.match(text, end)
    if match is None:
        return None
    line = text.rfind("\n", 0, end)
    if line >= 0 and text[line:end].strip() == "}":  # pretty-printed: "}" alone on its line
        token = text[line : match.end()]
        return (token.encode("ascii"), end - line, len(token) - 1) if token.isascii() else None
    # compact: "}" + separator + the first item's opening up to its first key's colon, which
    # the next item must repeat
    key = _FIRST_KEY.match(text, first)
    if key is None:
        return None
    token = text[end - 1 : match.end() - 1] + key.group()
    if not token.isascii() or not text.startswith(token, end - 1):
        return None
    return token.encode("ascii"), 1, match.end() - 1 - (end - 1)


def _find(handle: BinaryIO, token: bytes, start: int, limit: int) -> int:
    """The offset of ``token`` at or after ``start`` (looking at most ``limit`` bytes on), or -1."""
    window = 1 << 16
    while True:
        handle.seek(start)
        data = handle.read(window)
        found = data.find(token)
        if found >= 0:
            return start + found
        if len(data) < window or window >= limit:
            return -1
        window *= 4


class PartUnreadable(Exception):
    """A part that does not decode as a list of items: the one-item-at-a-time reader then
    names the problem."""


def iter_list_part(
    part: ListPart, *, chunk_bytes: int = 1 << 22, label: str | None = None
) -> Iterator[Record]:
    """The items of one part, labelled ``{label}[#i]`` (default ``file[bytes start:end]``),
    decoded a buffer of whole items per call: orjson where :mod:`benchreg.core.fastjson` proves
    it gives what ``json`` gives (with one key string per distinct key across the buffer), else
    ``json`` itself. PartUnreadable when a buffer does not decode (or holds a key twice)."""
    label = label or f"{part.path}[bytes {part.start}:{part.end}]"
    index = 0
    for items in _groups(part, chunk_bytes):
        for position, item in enumerate(items):
            items[position] = None  # the caller alone keeps what it wants of the item
            yield Record(f"{label}[#{index}]", item)
            index += 1


def _groups(part: ListPart, chunk_bytes: int) -> Iterator[list[Any]]:
    token, close, opening = part.token, part.close, part.opening
    try:
        with part.path.open("rb") as handle:
            handle.seek(part.start)
            left, rest = part.end - part.start, b""
            while left > 0:
                data = handle.read(min(chunk_bytes, left))
                if not data:
                    raise PartUnreadable(part)  # the file changed under the reader
                left -= len(data)
                buf = rest + data
                if not left:  # the part ends with the "}" of an item
                    yield _decode_items(b"[" + buf + b"]")
                    return
                cut, tries = buf.rfind(token), _CUT_TRIES
                while cut >= 0:
                    try:
                        items = _decode_items(b"[" + buf[: cut + close] + b"]")
                        break
                    except ValueError:
                        tries -= 1  # a compact token between nested objects: an earlier one
                        if not tries:
                            raise
                        cut = buf.rfind(token, 0, cut)
                if cut < 0:
                    rest = buf  # no item ends in this buffer: read on
                    continue
                yield items
                rest = buf[cut + opening :]
    except (OSError, ValueError):  # ValueError: JSONDecodeError, DuplicateKeyError, not UTF-8
        raise PartUnreadable(part) from None


_CUT_TRIES = 3  # cuts of one buffer tried before a part counts as unreadable


def _decode_items(text: bytes) -> list[Any]:
    fast, items = fastjson.decode_bytes(text)
    if fast:
        return items  # type: ignore[no-any-return]
    return json.loads(text.decode("utf-8"), object_pairs_hook=strict_object)  # type: ignore[no-any-return]


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
    decode = LineDecoder()
    for number, line in enumerate(text_lines(path), start=1):
        if not line.strip():
            continue
        try:
            value = decode(line)
        except ValueError as exc:  # JSONDecodeError, DuplicateKeyError, an overlong integer
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


class LineDecoder:
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


def index_lines(path: Path, key: str, *, what: str = "record") -> dict[str, tuple[int, Any]]:
    """``index_by_id(read_records(path), key, what=what)`` for a JSON Lines file, as ``{id:
    (line number, value)}``: the same checks, errors and order of errors, without a Record (and
    its ``file:line`` text) per line."""
    if path.is_dir():
        raise BenchregError("expected a file, found a folder", where=path)
    with gc_paused():
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
