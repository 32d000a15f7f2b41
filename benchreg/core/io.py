"""Reading inputs with precise error locations, and writing outputs atomically."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError, at


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` for every non-blank line; malformed JSON names file:line."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BenchregError("file not found", where=path) from None
    for number, line_bytes in enumerate(raw.splitlines(), start=1):
        try:
            line = line_bytes.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BenchregError(
                f"not UTF-8 text (byte {exc.start} of the line)", where=at(path, number)
            ) from None
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise BenchregError(
                f"malformed JSON ({exc.msg}, column {exc.colno})",
                where=at(path, number),
                fix="each line must be one JSON object",
            ) from None


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BenchregError("file not found", where=path) from None
    except UnicodeDecodeError as exc:
        raise BenchregError(f"not UTF-8 text (byte {exc.start})", where=path) from None


def read_json(path: Path) -> Any:
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchregError(
            f"malformed JSON ({exc.msg}, column {exc.colno})", where=at(path, exc.lineno)
        ) from None


def read_yaml(path: Path) -> Any:
    """Safe-load a YAML file; a syntax error names file:line."""
    import yaml

    text = read_text(path)
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise BenchregError(
            f"malformed YAML: {getattr(exc, 'problem', exc)}",
            where=at(path, mark.line + 1 if mark else None),
        ) from None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def atomic_write_text(path: Path, text: str) -> None:
    """Write to a temp file in the same folder, fsync, then rename over the target."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), 0o666 & ~_umask())  # mkstemp creates files 0600
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@cache
def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, default=_json_default) + "\n"


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, dumps(obj))


def atomic_write_jsonl(path: Path, rows: list[Any]) -> None:
    atomic_write_text(
        path,
        "".join(json.dumps(r, ensure_ascii=False, default=_json_default) + "\n" for r in rows),
    )


def _json_default(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
