"""One record reader for every family: JSON Lines or a JSON list, with exact error locations.

Every object is checked for duplicate keys (``{"id": 1, "id": 2}`` is an error, not silently the
last value), every error names ``file:line`` (JSON Lines) or ``file[#i]`` (an item of a JSON
list), and :func:`index_by_id` rejects a repeated id naming both places.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    return json.loads(text, object_pairs_hook=strict_object)


def read_json_strict(path: Path) -> Any:
    """A whole JSON document; malformed JSON or a duplicate key is an error at file:line."""
    text = read_text(path)
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise BenchregError(
            f"malformed JSON ({exc.msg}, column {exc.colno})", where=at(path, exc.lineno)
        ) from None
    except DuplicateKeyError as exc:
        raise BenchregError(str(exc), where=path, fix="give every key once") from None


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
    return list(_jsonl_records(path, lenient))


def _jsonl_records(path: Path, lenient: bool) -> Iterable[Record]:
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        where = at(path, number)
        try:
            yield Record(where, loads(line))
        except (json.JSONDecodeError, DuplicateKeyError) as exc:
            reason = (
                f"malformed JSON ({exc.msg}, column {exc.colno})"
                if isinstance(exc, json.JSONDecodeError)
                else str(exc)
            )
            if not lenient:
                raise BenchregError(
                    reason, where=where, fix="each line must be one JSON object"
                ) from None
            yield Record(where, None, reason)


def index_by_id(records: Iterable[Record], key: str, *, what: str = "record") -> dict[str, Record]:
    """``{id: record}``; a record that is not an object, lacks a string ``key`` or repeats an id
    is one clear error naming where."""
    out: dict[str, Record] = {}
    for record in records:
        data = record.data
        if not isinstance(data, dict):
            raise BenchregError(f"a {what} must be a JSON object", where=record.where)
        value = data.get(key)
        if not isinstance(value, str) or not value:
            raise BenchregError(f"a {what} needs a non-empty string {key!r}", where=record.where)
        if value in out:
            raise BenchregError(
                f"duplicate {key} {value!r} (first at {out[value].where})",
                where=record.where,
                fix=f"give every {what} its own {key}",
            )
        out[value] = record
    return out
