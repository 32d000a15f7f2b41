"""Reading inputs with precise error locations, and writing outputs atomically."""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import orjson

from benchreg.core.errors import BenchregError, at

RACY_NS = 2_000_000_000  # a file changed this recently may change again within its clock tick
_DIGESTS: dict[tuple[str, int, int, int, int, int], str] = {}


def sha256_file(path: Path) -> str:
    """The sha256 of ``path``'s bytes (hex), computed once per process for an unchanged file
    (same real path, device, inode, size and change times). A later write sets both times to
    its now, so it could go unseen only while both are that recent: such a file is hashed
    every time."""
    real = os.path.realpath(path)
    st = os.stat(real)
    identity = (real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    digest = _DIGESTS.get(identity)
    if digest is None:
        with open(real, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        if time.time_ns() - min(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS:
            _DIGESTS[identity] = digest
    return digest


def confined(path: Path, root: Path, *, what: str = "data path") -> Path:
    """``path`` resolved (symlinks followed), which must lie inside ``root`` (also resolved): a
    task's `data` entry, a split or view name, or a file named in a manifest cannot reach outside
    the family's data root."""
    root_resolved = root.resolve()
    resolved = (root_resolved / path).resolve() if not path.is_absolute() else path.resolve()
    if "\0" in str(path) or not resolved.is_relative_to(root_resolved):
        raise BenchregError(
            f"{what} {str(path)!r} leads outside the data root {root_resolved}",
            where=path,
            fix="name paths relative to the data root, without `..`, absolute paths or links "
            "that leave it",
        )
    return resolved


MAX_YAML_BYTES = 1 << 20  # a task or config YAML file is small; a bigger one is refused
MAX_YAML_NODES = 100_000  # nodes after expanding aliases (a "billion laughs" file has ~1e9)


def read_text(path: Path, *, max_bytes: int | None = None) -> str:
    try:
        if max_bytes is not None and path.stat().st_size > max_bytes:
            raise BenchregError(
                f"file too large ({path.stat().st_size} bytes; at most {max_bytes} accepted)",
                where=path,
                fix="a task or config file is a few kB; split or shorten it",
            )
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BenchregError("file not found", where=path) from None
    except IsADirectoryError:
        raise BenchregError("a folder where a file is expected", where=path) from None
    except PermissionError:
        raise BenchregError("file not readable (permission denied)", where=path) from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise BenchregError(
            f"not UTF-8 text (byte {exc.start})", where=at(path, line), fix="save it as UTF-8"
        ) from None
    except OSError as exc:
        raise BenchregError(f"cannot read the file ({exc.strerror})", where=path) from None


def read_json(path: Path) -> Any:
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchregError(
            f"malformed JSON ({exc.msg}, column {exc.colno})", where=at(path, exc.lineno)
        ) from None


def read_yaml(path: Path) -> Any:
    """Safe-load a YAML file; a syntax error, a duplicate key, an alias bomb or a file beyond
    :data:`MAX_YAML_BYTES` names file:line."""
    import yaml

    text = read_text(path, max_bytes=MAX_YAML_BYTES)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        node = yaml.compose(text, Loader=loader)
        check_yaml_node(node, path)
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise BenchregError(
            f"malformed YAML: {getattr(exc, 'problem', None) or exc}",
            where=at(path, mark.line + 1 if mark else None),
        ) from None


def check_yaml_node(node: Any, path: Path) -> None:
    """Reject duplicate mapping keys, recursive aliases and alias expansion beyond
    :data:`MAX_YAML_NODES` (sizes are counted once per shared node, so this is fast)."""
    import yaml

    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(item: yaml.Node) -> int:
        key = id(item)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise BenchregError("recursive YAML alias", where=at(path, item.start_mark.line + 1))
        active.add(key)
        total = 1
        if isinstance(item, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key_node, value_node in item.value:
                if isinstance(key_node, yaml.ScalarNode):
                    line = key_node.start_mark.line + 1
                    if key_node.value in seen and key_node.tag != "tag:yaml.org,2002:merge":
                        raise BenchregError(
                            f"duplicate key {key_node.value!r} (first at line "
                            f"{seen[key_node.value]})",
                            where=at(path, line),
                            fix="keep one of them",
                        )
                    seen[key_node.value] = line
                total += size(key_node) + size(value_node)
        elif isinstance(item, yaml.SequenceNode):
            total += sum(size(child) for child in item.value)
        active.discard(key)
        if total > MAX_YAML_NODES:
            raise BenchregError(
                f"YAML aliases expand beyond {MAX_YAML_NODES} nodes",
                where=at(path, item.start_mark.line + 1),
                fix="write the values out; anchors/aliases may only be used sparingly",
            )
        sizes[key] = total
        return total

    if node is not None:
        size(node)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    """Write to a temp file in the same folder, fsync, then rename over the target.
    ``durable=False`` skips the fsync: for a file made again from others (a sweep's summary,
    analyses and report, which `benchreg analyze` / `benchreg report` write again)."""
    if not durable:
        atomic_write_parts(path, [text.encode("utf-8")], durable=False)
        return
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


def atomic_write_parts(path: Path, parts: Iterable[bytes], *, durable: bool = True) -> str:
    """:func:`atomic_write_text` for bytes made while writing (one part in memory at a time);
    returns the sha256 of what was written. ``durable=False`` skips the fsync: for a cache,
    whose reader must then detect a file that a power loss left short."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as handle:
            for part in parts:
                digest.update(part)
                handle.write(part)
            handle.flush()
            os.fchmod(handle.fileno(), 0o666 & ~_umask())
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return digest.hexdigest()


def atomic_write_json(path: Path, obj: Any, *, durable: bool = True) -> None:
    atomic_write_text(path, dumps(obj), durable=durable)


def atomic_write_jsonl(path: Path, rows: list[Any], *, durable: bool = True) -> str:
    """One JSON line per row (see :func:`json_line`), written atomically; returns the file's
    sha256."""
    return atomic_write_parts(path, _line_parts(rows), durable=durable)


JSONL_PART_ROWS = 4096  # rows encoded into one part of a JSON Lines file


def _line_parts(rows: list[Any]) -> Iterator[bytes]:
    for start in range(0, len(rows), JSONL_PART_ROWS):
        yield b"".join([json_line(r) for r in rows[start : start + JSONL_PART_ROWS]])


_ORJSON_INDENT = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


def json_line(obj: Any) -> bytes:
    """``obj`` as one line of JSON Lines (UTF-8, non-ASCII kept readable, a final newline), by
    orjson. What orjson does not encode (an integer beyond 64 bits, a non-string key, deep
    nesting) is encoded by `json` as before; a non-finite float, which JSON cannot hold, is
    written as null (what every strict JSON reader, and the sample browser, makes of it)."""
    try:
        return orjson.dumps(obj, default=_orjson_default, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        text = json.dumps(obj, ensure_ascii=False, default=_json_default)
        return (text + "\n").encode("utf-8")


def fast_dumps(obj: Any) -> str:
    """:func:`dumps` (indented by 2, non-ASCII kept, a final newline) by orjson, for large
    files of plain values (the same text `json` writes, floats aside: orjson writes the same
    numbers in its own notation, `1e-5` for `1e-05`). Falls back to :func:`dumps` where orjson
    cannot encode; a non-finite float is written as null."""
    try:
        return orjson.dumps(obj, default=_orjson_default, option=_ORJSON_INDENT).decode("utf-8")
    except orjson.JSONEncodeError:
        return dumps(obj)


class EncodedJSON:
    """A value's JSON text, encoded already: the run-file writers put it in as it is (e.g. the
    first results of a columnar retrieval answer, encoded without building a dict each)."""

    __slots__ = ("text",)

    def __init__(self, text: bytes) -> None:
        self.text = text

    def value(self) -> Any:
        return orjson.loads(self.text)

    def __repr__(self) -> str:
        return f"EncodedJSON({self.text[:60]!r}...)"


def _orjson_default(obj: Any) -> Any:
    if type(obj) is EncodedJSON:
        return orjson.Fragment(obj.text)
    return _json_default(obj)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, EncodedJSON):
        return json.loads(obj.text)
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def json_default_or_text(obj: Any) -> Any:
    """The JSON form of ``obj`` as the run files write it, else its text."""
    try:
        return _json_default(obj)
    except TypeError:
        return str(obj)


def pretty_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2)``, the same text, faster: the json
    module writes indented JSON in pure Python (50 us for a MolP2S record's properties), orjson
    in C. orjson is used where both write the same text, which :func:`same_in_orjson` checks;
    anything else (a float under 1e-4 or not finite, a key that is not a string, an integer past
    64 bits, a lone surrogate) goes to the json module."""
    if same_in_orjson(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
        except (TypeError, orjson.JSONEncodeError):
            pass
    return json.dumps(value, ensure_ascii=False, indent=2)


def same_in_orjson(value: Any) -> bool:
    """Whether orjson writes ``value`` as the json module does, as far as the values go: dicts,
    lists, strings, integers, booleans, None, and floats that are 0 or finite and at least 1e-4
    in size (orjson writes 1e-05 as 0.00001, and NaN as null). What orjson refuses (a key that
    is not a string, an integer past 64 bits, a lone surrogate) it raises for, and the callers
    then ask json. Walked without recursion, containers only: it runs for every prompt."""
    if type(value) is float:
        return _plain_float(value)
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            item = item.values()
        elif kind is not list and kind is not tuple:
            if kind is str or kind is int or kind is bool or item is None:
                continue
            return False  # anything else (a subclass, a set): the json module decides
        for part in item:
            kind = type(part)
            if kind is float:
                if not _plain_float(part):
                    return False
            elif kind is dict or kind is list or kind is tuple:
                stack.append(part)
            elif not (kind is str or kind is int or kind is bool or part is None):
                return False
    return True


def _plain_float(value: float) -> bool:
    return value == 0.0 or 1e-4 <= abs(value) < math.inf


def sorted_json(value: Any) -> str:
    """``json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))``, the
    same text (cache keys and digests are hashes of it), by orjson where :func:`same_in_orjson`
    says both write the same: a MolP2S prompt took 8 us with json, 3 with orjson."""
    if same_in_orjson(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")
        except (TypeError, orjson.JSONEncodeError):
            pass
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
