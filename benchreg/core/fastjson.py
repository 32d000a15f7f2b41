"""The core reader's strict JSON (duplicate keys are an error) at orjson's speed.

`benchreg.core.reader` tries this first. orjson decodes the bytes; its result is taken only where
it is provably what the reader's own path (`json` with a duplicate-key check) gives. Anywhere else
the reader's own path runs, so values, errors and their locations stay exactly its own. The
checks are byte counts and searches over the raw text and ``orjson.dumps`` of the decoded value
(compact; it escapes only quotes, backslashes and control characters):

- duplicate keys (orjson keeps one of them silently): every member of an object has one `:`
  outside strings, so the raw text holds ``members + colons inside all its strings``, the dump
  ``kept keys + colons inside the kept strings``. While no kept string spells a colon as
  ``\\u003a``, a string holds as many colons raw as decoded, so the counts are equal exactly when
  no member was dropped. Escaped colons are ruled out by a search, or for free when the raw text
  holds as many backslashes as the dump: each character costs at least as many raw backslashes
  as dumped ones, equal only for the escapes the dump writes too (a quote, a backslash, a control
  character), so equal totals leave no room for a ``\\u003a``;
- values: orjson turns an integer beyond 64 bits into a float (`json` keeps the int), so a text
  with a run of 19 or more digits anywhere is left to the core reader; what else `json` accepts
  and orjson does not (NaN, 1e400, lone surrogates, deep nesting) is an orjson error, hence goes
  to the core reader too;
- JSON Lines: lines are cut at ``\\n`` (``\\r\\n`` included). The core reader reads text with
  universal newlines and `str.splitlines`, which also cuts at a lone ``\\r``, ``\\v``, ``\\f``,
  ``\\x1c-\\x1e``, U+0085, U+2028 and U+2029; a file holding any of those is left to it, so line
  numbers never differ.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19  # a run of 19 digits: maybe an integer orjson cannot hold
_BOM = b"\xef\xbb\xbf"
_LINE_SEPARATORS = re.compile(b"\xe2\x80[\xa8\xa9]")  # U+2028, U+2029 (a literal prefix: fast)
CHUNK_BYTES = 1 << 22  # JSON Lines are decoded this many bytes at a time


def _same_as_core(data: bytes, value: Any) -> bool:
    """Whether orjson's ``value`` of ``data`` is what the core reader gives (see the module)."""
    if _LONG_NUMBER in data.translate(_DIGITS):
        return False
    return _same_counts(data, value)


def _same_counts(data: bytes, value: Any) -> bool:
    """The colon and backslash counts of the module's rule. For many texts at once (the lines
    of a chunk), ``data`` holding them all and ``value`` the list of their values: each text's
    raw counts are at least its dump's (while no colon is escaped), so the totals are equal
    exactly when every text's are."""
    try:
        dumped = orjson.dumps(value)
    except orjson.JSONEncodeError:  # nesting that orjson reads but does not write (255+ levels)
        return False
    if data.count(b"\\") != dumped.count(b"\\") and (b"\\u003a" in data or b"\\u003A" in data):
        return False
    return data.count(b":") == dumped.count(b":")


def decode_bytes(data: bytes) -> tuple[bool, Any]:
    """(True, value) when orjson's value of ``data`` is provably the core reader's, else
    (False, None): the core reader then decodes it and names any problem."""
    if data.startswith(_BOM):
        return False, None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return False, None
    return (True, value) if _same_as_core(data, value) else (False, None)


def json_lines(path: Path) -> list[tuple[int, Any]] | None:
    """``(line number, value)`` of every non-blank line of a JSON Lines file, as the core reader
    gives them; None when that cannot be proven for the whole file (any bad or unusual line, a
    long number, an unreadable file): the core reader then reads it and names any problem."""
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


# digits -> "0" (a run of 19 is a long number); \v \f \x1c-\x1e -> \v (line breaks to splitlines)
_MARKED = bytes.maketrans(b"123456789\x0c\x1c\x1d\x1e", b"000000000\x0b\x0b\x0b\x0b")


def _chunk_lines(data: bytes, number: int) -> list[tuple[int, Any]]:
    """The lines of a chunk of whole lines, the first being line ``number + 1``."""
    marked = data.translate(_MARKED)
    if (
        b"\x0b" in marked
        or (b"\r" in data and data.count(b"\r") != data.count(b"\r\n"))
        or (b"\xc2" in data and b"\xc2\x85" in data)
        or _LINE_SEPARATORS.search(data) is not None
    ):
        raise _Fallback  # other line breaks to str.splitlines
    if _LONG_NUMBER in marked:
        raise _Fallback  # maybe an integer beyond 64 bits
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
    except orjson.JSONDecodeError:
        raise _Fallback from None
    # no key repeated, no escaped colon, in any other line: one check over all of them (the
    # dump of the values' list adds brackets and commas, no colon or backslash)
    if unproven and not _same_counts(b"\n".join(unproven), unproven_values):
        raise _Fallback
    return out
