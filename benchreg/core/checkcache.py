"""Validation results cached by the sha256 of the data files they checked.

A loader that runs an expensive check over a data file (RDKit parsing every SMILES, ...) asks
:func:`validated` first; when the same check with the same params already passed on files with the
same sha256 under the same benchreg version, it may skip the check (and says so in its log and
``Dataset.info``). Only a check that passed is recorded (:func:`mark_validated`); a failing file is
checked again on every run, so its error is always reported.

Entries live outside any run folder, in the benchreg cache dir: ``$BENCHREG_CACHE_DIR``, else
``$XDG_CACHE_HOME/benchreg``, else ``~/.cache/benchreg``; one small JSON file per entry under
``validated/``, written to a temp file and renamed (safe when parallel processes record the same
entry). ``BENCHREG_VALIDATION_CACHE=off`` turns the cache off (every check runs). A cache that
cannot be written (read-only home) is skipped silently: caching is an optimisation only.

A loader may also keep what it built from large files that passed all its checks
(:func:`store_loaded` / :func:`loaded`): a list of rows of plain JSON-like values (dicts, lists,
tuples, strings, numbers) in :mod:`marshal` chunks under ``loaded/``, one entry per (loader,
params, file paths), replaced when the files change, reused only while every file has the same
sha256 (and the same benchreg and Python versions), with equal strings stored once
(:func:`shared_strings`). Reading that back is several times faster than decoding and validating
the files again.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import marshal
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from benchreg.core.io import (
    atomic_write_parts,
    atomic_write_text,
    sha256_file,
    sha256_text,
)
from benchreg.core.reader import gc_paused
from benchreg.core.types import DeferredInput


def cache_dir() -> Path:
    explicit = os.environ.get("BENCHREG_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "benchreg"


def enabled() -> bool:
    setting = os.environ.get("BENCHREG_VALIDATION_CACHE", "").lower()
    return setting not in ("0", "off", "false", "no")


def _entry(check: str, files: Sequence[Path], params: Mapping[str, Any]) -> tuple[Path, dict]:
    from benchreg.core.version import __version__

    record = {
        "check": check,
        "benchreg": __version__,
        "params": dict(params),
        "files": [{"name": Path(f).name, "sha256": sha256_file(Path(f))} for f in files],
    }
    key = sha256_text(json.dumps(record, sort_keys=True, default=str))
    return cache_dir() / "validated" / key[:2] / f"{key}.json", record


def validated(check: str, files: Sequence[Path], params: Mapping[str, Any] | None = None) -> bool:
    """True when ``check`` with ``params`` already passed on these files' exact contents."""
    if not enabled():
        return False
    path, _ = _entry(check, files, params or {})
    return path.is_file()


def mark_validated(
    check: str, files: Sequence[Path], params: Mapping[str, Any] | None = None
) -> None:
    """Record that ``check`` passed on these files (best effort)."""
    if not enabled():
        return
    path, record = _entry(check, files, params or {})
    with contextlib.suppress(OSError):
        atomic_write_text(path, json.dumps(record, sort_keys=True) + "\n")


LOADED_MIN_BYTES = 1 << 20  # smaller files decode faster than a cache entry is checked and read


def _loaded_entry(
    kind: str, files: Sequence[Path], params: Mapping[str, Any]
) -> tuple[Path, bytes] | None:
    from benchreg.core.version import __version__

    try:
        if not enabled() or sum(Path(f).stat().st_size for f in files) < LOADED_MIN_BYTES:
            return None
        digests = [sha256_file(Path(f)) for f in files]
    except OSError:
        return None  # a missing or unreadable file: the loader reports it its own way
    where = {
        "kind": kind,
        "format": "marshal chunks",
        "benchreg": __version__,
        "python": sys.version,
        "params": dict(params),
        "files": [str(Path(f).resolve()) for f in files],
    }
    key = sha256_text(json.dumps(where, sort_keys=True, default=str))
    header = json.dumps({**where, "sha256": digests}, sort_keys=True, default=str)
    return cache_dir() / "loaded" / f"{key}.marshal", header.encode("utf-8") + b"\n"


ROWS_PER_CHUNK = 10_000


def loaded(
    kind: str, files: Sequence[Path], params: Mapping[str, Any] | None = None
) -> list[Any] | None:
    """The rows :func:`store_loaded` kept for these exact file contents, or None."""
    entry = _loaded_entry(kind, files, params or {})
    if entry is None:
        return None
    path, header = entry
    try:
        with path.open("rb") as handle:
            return _read_rows(handle) if handle.readline() == header else None
    except OSError:
        return None


def store_loaded(
    kind: str,
    files: Sequence[Path],
    rows: Sequence[Any],
    params: Mapping[str, Any] | None = None,
    *,
    strings_shared: bool = False,
    then: Sequence[Path] = (),
    defer_inputs: bool = False,
) -> None:
    """Keep ``rows`` (built from ``files``, all checks passed) for the next run (best effort),
    followed by the rows of the rows files ``then`` (:func:`write_rows`), copied as they are.

    With ``defer_inputs`` (rows ``(id, input, gold, meta)`` of samples), each chunk keeps its
    inputs encoded apart from the rest: :func:`loaded` gives them as
    :class:`~benchreg.core.types.DeferredInput`, decoded a chunk at a time when a sample's
    ``input`` is first read, with the lengths of their list values at hand without decoding.
    A MolP2S record's input is about 80% of its objects, and a predictions run reads none of it.

    Written and read back in chunks of :data:`ROWS_PER_CHUNK` rows (neither side holds the whole
    entry's bytes besides the rows), each chunk's equal strings stored once
    (:func:`shared_strings`; skipped with ``strings_shared``, when the caller made the strings
    it wants stored once one object already: marshal writes an object met again as a
    back-reference), then an end marker and the row count."""
    entry = _loaded_entry(kind, files, params or {})
    if entry is None:
        return
    path, header = entry

    def parts() -> Iterator[bytes]:
        yield header
        yield from _chunks(rows, strings_shared, defer_inputs)
        count = len(rows)
        for rows_file in then:
            with rows_file.open("rb") as handle:
                body = handle.seek(-_END_BYTES, os.SEEK_END)
                count += int.from_bytes(handle.read(_END_BYTES)[8:], "little")
                handle.seek(0)
                while body > 0 and (block := handle.read(min(body, 1 << 22))):
                    body -= len(block)
                    yield block
        yield _end(count)

    with contextlib.suppress(OSError, ValueError):
        atomic_write_parts(path, parts(), durable=False)


def write_rows(
    path: Path, rows: Sequence[Any], *, strings_shared: bool = False, defer_inputs: bool = False
) -> None:
    """A rows file: ``rows`` in the loaded-data entries' chunks, without their header (how a
    worker process hands its rows over, see core.partload); read with :func:`read_rows`.
    ``strings_shared`` and ``defer_inputs``: as in :func:`store_loaded`."""
    parts = itertools.chain(_chunks(rows, strings_shared, defer_inputs), [_end(len(rows))])
    atomic_write_parts(path, parts, durable=False)  # a chunk at a time, not all their bytes


def read_rows(path: Path) -> list[Any] | None:
    """The rows of a rows file; None when it is missing, cut short or not one."""
    try:
        with path.open("rb") as handle:
            return _read_rows(handle)
    except OSError:
        return None


_END_BYTES = 16  # a zero length, then the row count


def _chunks(rows: Sequence[Any], strings_shared: bool, defer_inputs: bool) -> Iterator[bytes]:
    """Each chunk: marshal of its list of rows, or with ``defer_inputs`` of a pair (the rows
    as ``(id, lengths of the input's lists, gold, meta)``, marshal of their inputs)."""
    for start in range(0, len(rows), ROWS_PER_CHUNK):
        chunk = list(rows[start : start + ROWS_PER_CHUNK])
        if not strings_shared:
            chunk = shared_strings(chunk)
        if defer_inputs:
            heads = [(row[0], _list_lengths(row[1]), row[2], row[3]) for row in chunk]
            blob = marshal.dumps((heads, marshal.dumps([row[1] for row in chunk])))
        else:
            blob = marshal.dumps(chunk)
        yield len(blob).to_bytes(8, "little")
        yield blob


def _list_lengths(value: Mapping[str, Any]) -> dict[str, int]:
    return {key: len(item) for key, item in value.items() if type(item) is list}


class _EncodedInputs:
    """The inputs of one chunk, decoded on first use (see :func:`store_loaded`)."""

    __slots__ = ("_blob", "_values")

    def __init__(self, blob: bytes) -> None:
        self._blob = blob
        self._values: list[Any] | None = None

    def values(self) -> list[Any]:
        if self._values is None:
            with gc_paused():
                self._values = marshal.loads(self._blob)
            self._blob = b""
        return self._values


def _rows_of_chunk(value: Any) -> list[Any]:
    if type(value) is not tuple:
        return value  # type: ignore[no-any-return]
    heads, blob = value
    inputs = _EncodedInputs(blob)
    return [
        (sample_id, DeferredInput(inputs, index, lengths), gold, meta)
        for index, (sample_id, lengths, gold, meta) in enumerate(heads)
    ]


def _end(count: int) -> bytes:
    return (0).to_bytes(8, "little") + count.to_bytes(8, "little")


def _read_rows(handle: BinaryIO) -> list[Any] | None:
    # Every caller is protected from the collector here, not only those that pause it
    # themselves: 100,000 MolP2S rows read in 0.7 s, and in 4.2 s with collections on (they
    # walk the growing heap again and again).
    rows: list[Any] = []
    try:
        with gc_paused():
            while size := int.from_bytes(handle.read(8), "little"):
                rows += _rows_of_chunk(marshal.loads(handle.read(size)))
        complete = int.from_bytes(handle.read(8), "little") == len(rows) and not handle.read()
    except (ValueError, EOFError, TypeError):
        return None
    return rows if complete else None  # a file cut short (it is written without fsync)


def shared_strings(value: Any) -> Any:
    """``value`` with one object per distinct string (dict keys included), equal to before.

    :mod:`marshal` writes an object it meets again as a back-reference, so a value whose equal
    strings are one object is written once and read back once: decoded JSON repeats its keys and
    many values (SMILES, units) in every record, and reading the entry back gets ~40% faster and
    smaller. Dicts and lists are updated in place (their strings swapped for equal ones: no
    second copy of the data in memory); tuples are rebuilt."""
    memo: dict[str, str] = {}
    remember = memo.setdefault

    def walk(x: Any) -> Any:
        kind = type(x)
        if kind is str:
            return remember(x, x)
        if kind is dict:
            items = list(x.items())
            x.clear()
            for k, v in items:
                x[remember(k, k) if type(k) is str else k] = walk(v)
        elif kind is list:
            x[:] = [walk(v) for v in x]
        elif kind is tuple:
            return tuple([walk(v) for v in x])
        return x

    return walk(value)
