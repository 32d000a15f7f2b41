"""The lines of a JSON Lines run as a stream: ``(line number, byte offset, byte length,
value)``, decoded by orjson a chunk at a time, never the whole file's values at once.

A value is given only where it is provably what the core reader (`benchreg.core.reader`
``json_lines``) gives for that line, by the same checks as `benchreg.core.fastjson`: no BOM, no
line break other than ``\\n`` / ``\\r\\n`` (``str.splitlines`` would cut there), and per line
no repeated key (colon counts, see `benchreg.core.fastjson`). A line with a run of 19 digits (an
integer orjson cannot hold, or a float such as a latency Python printed with 20 digits) is
decoded by the core reader's own line decoder instead. Anything else raises :class:`FallBack`:
the caller then reads the file with the core reader from the start, which names any problem.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from benchreg.core import fastjson
from benchreg.core.reader import LineDecoder

CHUNK_BYTES = 1 << 24


class FallBack(Exception):
    """The file needs the core reader's path."""


def _unusual(data: bytes, marked: bytes) -> bool:
    return (
        b"\x0b" in marked
        or (b"\r" in data and data.count(b"\r") != data.count(b"\r\n"))
        or (b"\xc2" in data and b"\xc2\x85" in data)
        or fastjson._LINE_SEPARATORS.search(data) is not None
    )


def _same(line: bytes, value: Any, colons: int) -> bool:
    """`benchreg.core.fastjson`'s check that orjson kept every member (no repeated key), for a
    line of a chunk already searched for long numbers."""
    try:
        dumped = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return False
    if (
        b"\\" in line
        and line.count(b"\\") != dumped.count(b"\\")
        and (b"\\u003a" in line or b"\\u003A" in line)
    ):
        return False
    return colons == dumped.count(b":")


BATCH_LINES = 512  # lines decoded before their repeated-key check, done once for them all


def _all_same(batch: list[tuple[int, int, int, Any, int]], plain: bool) -> bool:
    """:func:`_same` for every line of ``batch`` (``(number, offset, size, value, colons)``)
    that needs it. In a chunk without a backslash a line's string members hold exactly the
    colons of its text, so orjson's dump of a value holds at most the line's colons, as many
    exactly when no key was dropped: one dump of the whole batch, its colons counted, decides
    for all (on a mismatch or an encoding error, each line is checked as before)."""
    pending = [
        item
        for item in batch
        if item[4] and not (type(item[3]) is dict and item[4] == len(item[3]))
    ]
    if not pending:
        return True
    if plain:
        try:
            dumped = orjson.dumps([item[3] for item in pending])
        except orjson.JSONEncodeError:
            pass
        else:
            if dumped.count(b":") == sum(item[4] for item in pending):
                return True
    return False


def _lines(
    data: bytes, number: int, offset: int, long_numbers: bool
) -> Iterator[tuple[int, int, int, Any, int]]:
    """``(number, offset, size, value, colons)`` of the non-blank lines of a chunk. With
    ``long_numbers`` (a run of 19 digits somewhere in the chunk), each line holding one is
    decoded by the core reader's own line decoder (an integer beyond 64 bits, or a float such as
    a latency printed with 20 digits: orjson is not proven to read those as Python does), with
    colons 0 (that decoder refuses a repeated key itself); the others by orjson."""
    decode, core = orjson.loads, LineDecoder()
    marked = fastjson._MARKED
    for line in data.split(b"\n"):
        number += 1
        size = len(line)
        if line.strip():
            if long_numbers and fastjson._LONG_NUMBER in line.translate(marked):
                try:
                    value = core(line.decode("utf-8"))
                except ValueError:  # (UnicodeDecodeError, a JSON error, a repeated key)
                    raise FallBack from None
                yield number, offset, size, value, 0
            else:
                try:
                    value = decode(line)
                except orjson.JSONDecodeError:
                    raise FallBack from None
                yield number, offset, size, value, line.count(b":")
        offset += size + 1


def stream_lines(
    path: Path, start: int = 0, end: int | None = None
) -> Iterator[tuple[int, int, int, Any]]:
    """The lines of the file, or of its bytes ``[start, end)`` (both at line starts), with the
    whole file's line numbers and offsets."""
    try:
        handle = path.open("rb")
    except OSError:
        raise FallBack from None
    with handle:
        number = fastjson.lines_before(handle, start)
        rest, base = b"", start
        left = -1 if end is None else end - start  # bytes still to read (-1: to the end)
        while True:
            chunk = handle.read(CHUNK_BYTES if left < 0 else min(CHUNK_BYTES, left))
            if left > 0:
                left -= len(chunk)
            data = rest + chunk
            if base == 0 and data.startswith(fastjson._BOM):
                raise FallBack
            if chunk:
                cut = data.rfind(b"\n") + 1
                data, rest = data[:cut], data[cut:]
            if data:
                marked = data.translate(fastjson._MARKED)
                if _unusual(data, marked):
                    raise FallBack
                plain = b"\\" not in data
                lines = _lines(data, number, base, fastjson._LONG_NUMBER in marked)
                while batch := list(itertools.islice(lines, BATCH_LINES)):
                    if not _all_same(batch, plain):
                        for item in batch:
                            line = data[item[1] - base : item[1] - base + item[2]]
                            if not (
                                item[4] == 0
                                or (type(item[3]) is dict and item[4] == len(item[3]))
                                or _same(line, item[3], item[4])
                            ):
                                raise FallBack
                    for item in batch:
                        yield item[0], item[1], item[2], item[3]
                number += data.count(b"\n") + (not data.endswith(b"\n"))
                base += len(data)
            if not chunk:
                return
