"""The core reader's strict JSON (duplicate keys are an error) at compiled decoders' speed.

`benchreg.core.reader` tries this first. Any failure here sends the text to the reader's own
path (`json` with a duplicate-key check), so values, errors and their locations stay exactly its
own.

A whole document is decoded by jiter (pydantic's JSON parser) with ``catch_duplicate_keys``, so
a key repeated in any object is its error. Its values are `json`'s (integers of any length as
ints, floats rounded alike: tests/core/test_fastjson.py compares them on edge cases and random
numbers), and where they would not be it fails instead (a lone surrogate, nesting beyond 200
levels, more digits than Python converts). Only object keys go through its string cache.

JSON Lines are decoded a chunk of lines at a time by orjson, whose call costs less on a line,
and its values are taken where byte counts over the raw text and ``orjson.dumps`` of the values
(compact; it escapes only quotes, backslashes and control characters) prove them `json`'s;
the lines of a chunk they do not prove go to jiter. A chunk whose first line holds nested
objects, which only the dump could prove, goes to jiter at once (its own check costs less than
orjson and the dump together):

- repeated keys (orjson keeps one of them silently): every member of an object has one `:`
  outside strings, so the raw text holds ``members + colons inside all its strings``, the dump
  ``kept keys + colons inside the kept strings``. While no kept string spells a colon as
  ``\\u003a``, a string holds as many colons raw as decoded, so the counts are equal exactly
  when no member was dropped. Escaped colons are ruled out by a search, or for free when the
  raw text holds as many backslashes as the dump: each character costs at least as many raw
  backslashes as dumped ones, equal only for the escapes the dump writes too. A line of one
  object without nested ones whose colons are as many as its keys needs no dump at all;
- values: orjson turns an integer beyond 64 bits into a float (`json` keeps the int), so a
  chunk with a run of 19 or more digits anywhere goes to jiter; what else `json` accepts and
  orjson does not (NaN, Infinity, a lone surrogate) is an orjson error, and goes to jiter too;
- line breaks: lines are cut at ``\\n`` (``\\r\\n`` included). The core reader reads text with
  universal newlines and `str.splitlines`, which also cuts at a lone ``\\r``, ``\\v``, ``\\f``,
  ``\\x1c-\\x1e``, U+0085, U+2028 and U+2029; a file holding any of those is left to it, so
  line numbers never differ.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jiter
import orjson

_BOM = b"\xef\xbb\xbf"
_LONG_NUMBER = b"0" * 19  # a run of 19 digits (once digits are zeros): maybe beyond 64 bits
_LINE_SEPARATORS = re.compile(b"\xe2\x80[\xa8\xa9]")  # U+2028, U+2029 (a literal prefix: fast)
CHUNK_BYTES = 1 << 22  # JSON Lines are decoded this many bytes at a time
_decode = jiter.from_json


def decode_bytes(data: bytes) -> tuple[bool, Any]:
    """(True, value) when the fast decoder's value of ``data`` is the core reader's, else
    (False, None): the core reader then decodes it and names any problem (see the module)."""
    if data.startswith(_BOM):
        return False, None
    try:
        return True, _decode(data, catch_duplicate_keys=True, cache_mode="keys")
    except ValueError:  # not JSON, a repeated key, or a value jiter does not give as json does
        return False, None


def json_lines(path: Path) -> list[tuple[int, Any]] | None:
    """``(line number, value)`` of every non-blank line of a JSON Lines file, as the core reader
    gives them; None when that cannot be proven for the whole file (any bad or unusual line, an
    unreadable file): the core reader then reads it and names any problem."""
    out: list[tuple[int, Any]] = []
    try:
        for lines in _fast_chunks(path):
            out += lines
    except _Fallback:
        return None
    return out


class _Fallback(Exception):
    pass


def json_lines_between(path: Path, start: int, end: int) -> list[tuple[int, Any]] | None:
    """:func:`json_lines` of the lines in bytes ``[start, end)`` of ``path``, numbered as in the
    whole file; ``start`` and ``end`` are line starts (0, just after a ``\n``, or the size)."""
    out: list[tuple[int, Any]] = []
    try:
        for lines in _fast_chunks(path, start, end):
            out += lines
    except _Fallback:
        return None
    return out


def line_start_after(path: Path, offset: int) -> int:
    """The start of the first line beginning at ``offset`` or later (the size if none does)."""
    with path.open("rb") as handle:
        if offset <= 0:
            return 0
        handle.seek(offset - 1)
        position = offset - 1
        while block := handle.read(1 << 16):
            found = block.find(b"\n")
            if found >= 0:
                return position + found + 1
            position += len(block)
        return position


def _fast_chunks(
    path: Path, start: int = 0, end: int | None = None
) -> Iterator[list[tuple[int, Any]]]:
    try:
        handle = path.open("rb")
    except OSError:
        raise _Fallback from None
    with handle:
        number = lines_before(handle, start)
        left = -1 if end is None else end - start  # bytes still to read (-1: to the end)
        rest = b""
        while True:
            chunk = handle.read(CHUNK_BYTES if left < 0 else min(CHUNK_BYTES, left))
            left -= len(chunk) if left >= 0 else 0
            data = rest + chunk
            if start == 0 and number == 0 and data.startswith(_BOM):
                raise _Fallback
            if chunk:
                cut = data.rfind(b"\n") + 1  # whole lines only (a "\r\n" is never cut)
                data, rest = data[:cut], data[cut:]
            if data:
                yield _chunk_lines(data, number)
                number += data.count(b"\n")
            if not chunk:
                return


def lines_before(handle: Any, start: int) -> int:
    """The ``\n`` in the file's first ``start`` bytes (the handle is left at ``start``)."""
    count = 0
    while handle.tell() < start:
        count += handle.read(min(CHUNK_BYTES, start - handle.tell())).count(b"\n")
    return count


def _chunk_lines(data: bytes, number: int) -> list[tuple[int, Any]]:
    """The lines of a chunk of whole lines, the first being line ``number + 1``: decoded by
    orjson where the counts prove its values (see the module), else by jiter."""
    marked = data.translate(_MARKED)
    if (
        b"\x0b" in marked
        or (b"\r" in data and data.count(b"\r") != data.count(b"\r\n"))
        or (b"\xc2" in data and b"\xc2\x85" in data)
        or _LINE_SEPARATORS.search(data) is not None
    ):
        raise _Fallback  # other line breaks to str.splitlines
    # no integer orjson may turn into a float, and no nested objects (see below)
    if _LONG_NUMBER not in marked and not _nested_first_line(data):
        lines = _proven_lines(data, number)
        if lines is not None:
            return lines
    strict = _decode
    try:
        return [
            (index, strict(line, catch_duplicate_keys=True, cache_mode="keys"))
            for index, line in enumerate(data.split(b"\n"), start=number + 1)
            if line.strip()
        ]
    except ValueError:  # not JSON, a repeated key, or a value jiter does not give as json does
        raise _Fallback from None


def _nested_first_line(data: bytes) -> bool:
    """Whether the chunk's first line is an object holding objects (itself or in a list). The
    colons of such a line never prove it alone, so every line would need the dump of its
    values, and jiter's own repeated-key check costs less than orjson and that dump together
    (MolP2S task lines: 0.5 s against 0.85 s per 64 MB); flat lines, texts with colons
    included, cost less by orjson. The choice changes no value, only the cost."""
    line = data[: data.find(b"\n")] if b"\n" in data else data
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False  # (blank, or NaN, Infinity: _proven_lines leaves the chunk to jiter)
    return type(value) is dict and any(
        type(item) is dict or (type(item) is list and any(type(x) is dict for x in item))
        for item in value.values()
    )


def _proven_lines(data: bytes, number: int) -> list[tuple[int, Any]] | None:
    """orjson's values of the chunk's lines when the counts prove them, else None."""
    decode = orjson.loads
    out: list[tuple[int, Any]] = []
    unproven: list[bytes] = []  # lines the shortcut below does not clear
    unproven_values: list[Any] = []
    try:
        for index, line in enumerate(data.split(b"\n"), start=number + 1):
            if not line.strip():
                continue
            value = decode(line)
            out.append((index, value))
            colons = line.count(b":")
            # as many colons as keys: no key repeated, no nested object (see the module)
            if not (colons == 0 or (type(value) is dict and colons == len(value))):
                unproven.append(line)
                unproven_values.append(value)
    except orjson.JSONDecodeError:  # NaN, Infinity: jiter reads them as json does
        return None
    # no key repeated, no escaped colon, in any other line: one check over all of them
    if unproven and not _same_counts(b"\n".join(unproven), unproven_values):
        return None
    return out


def _same_counts(data: bytes, values: list[Any]) -> bool:
    """The colon and backslash counts of the module's rule for texts ``data`` (lines joined)
    and their values: the dump of the values' list adds brackets and commas, no colon or
    backslash, and each text's raw counts are at least its dump's (while no colon is escaped),
    so the totals are equal exactly when every text's are."""
    try:
        dumped = orjson.dumps(values)
    except orjson.JSONEncodeError:  # nesting that orjson reads but does not write (255+ levels)
        return False
    if data.count(b"\\") != dumped.count(b"\\") and (b"\\u003a" in data or b"\\u003A" in data):
        return False
    return data.count(b":") == dumped.count(b":")


# digits -> "0" (a run of 19 is an integer orjson may not hold); \v \f \x1c-\x1e -> \v (line
# breaks to str.splitlines); also used by the retrieval family's JSON Lines stream
_MARKED = bytes.maketrans(b"123456789\x0c\x1c\x1d\x1e", b"000000000\x0b\x0b\x0b\x0b")
