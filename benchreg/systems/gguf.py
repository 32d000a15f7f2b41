"""Reading a GGUF file's metadata (its key/value header) without loading the model.

Only what benchreg needs: scalar and string values (``general.architecture``,
``tokenizer.chat_template``, token ids, ...); arrays are skipped unless asked for by key. Every
length is checked against the file's size, so a damaged file is a :class:`GGUFError`, never a
huge allocation. Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (v2 and v3).
"""

from __future__ import annotations

import json
import mmap
import struct
from collections.abc import Collection
from pathlib import Path
from typing import Any

MAGIC = b"GGUF"
# value type -> struct format of one element (strings and arrays are handled apart)
_SCALARS = {
    0: "B",  # uint8
    1: "b",  # int8
    2: "H",  # uint16
    3: "h",  # int16
    4: "I",  # uint32
    5: "i",  # int32
    6: "f",  # float32
    7: "?",  # bool
    10: "Q",  # uint64
    11: "q",  # int64
    12: "d",  # float64
}
_STRING, _ARRAY = 8, 9
MAX_KEYS = 1 << 20
_TRUNCATED = "truncated metadata (a damaged or partly copied file?)"


class GGUFError(ValueError):
    """Not a GGUF file, or a damaged one."""


def read_metadata(path: Path, *, arrays: Collection[str] = ()) -> dict[str, Any]:
    """The metadata of the GGUF at ``path``: scalars and strings, plus the arrays named in
    ``arrays`` (as lists). Raises :class:`GGUFError` (bad magic or version, truncated) or
    OSError (missing, unreadable)."""
    with path.open("rb") as handle:
        if path.stat().st_size < 24:
            magic = handle.read(4)
            if magic != MAGIC:
                raise GGUFError(f"not a GGUF file (it starts with {magic!r}, not b'GGUF')")
            raise GGUFError(_TRUNCATED)
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _Reader(data).metadata(set(arrays))


class _Reader:
    def __init__(self, data: mmap.mmap) -> None:
        self.data = data
        self.size = len(data)
        self.pos = 0
        self.order = "<"

    def metadata(self, arrays: set[str]) -> dict[str, Any]:
        magic = bytes(self.data[:4])
        if magic != MAGIC:
            raise GGUFError(f"not a GGUF file (it starts with {magic!r}, not b'GGUF')")
        self.pos = 4
        version = self._unpack("I")[0]
        if version > 0xFFFF:  # a big-endian file
            self.order = ">"
            self.pos = 4
            version = self._unpack("I")[0]
        if version not in (2, 3):
            raise GGUFError(f"GGUF version {version} is not supported (2 and 3 are)")
        _tensors, count = self._unpack("QQ")
        if count > MAX_KEYS:
            raise GGUFError(f"implausible metadata count {count} (a damaged file?)")
        out: dict[str, Any] = {}
        for _ in range(count):
            key = self._string()
            kind = self._unpack("I")[0]
            if kind == _ARRAY:
                value = self._array(keep=key in arrays)
                if key in arrays:
                    out[key] = value
            else:
                out[key] = self._value(kind)
        return out

    def _skip(self, n: int) -> int:
        start = self.pos
        if n < 0 or start + n > self.size:
            raise GGUFError(_TRUNCATED)
        self.pos = start + n
        return start

    def _unpack(self, fmt: str) -> tuple[Any, ...]:
        full = self.order + fmt
        return struct.unpack_from(full, self.data, self._skip(struct.calcsize(full)))

    def _string(self) -> str:
        length = self._unpack("Q")[0]
        start = self._skip(length)
        return self.data[start : start + length].decode("utf-8", "replace")

    def _value(self, kind: int) -> Any:
        if kind == _STRING:
            return self._string()
        fmt = _SCALARS.get(kind)
        if fmt is None:
            raise GGUFError(f"unknown metadata value type {kind} (a damaged file?)")
        return self._unpack(fmt)[0]

    def _array(self, *, keep: bool) -> list[Any] | None:
        kind, count = self._unpack("IQ")
        if count > self.size:  # every element takes at least one byte
            raise GGUFError(f"implausible array length {count} (a damaged file?)")
        if kind in _SCALARS and not keep:
            self._skip(struct.calcsize(self.order + _SCALARS[kind]) * count)
            return None
        if kind == _STRING and not keep:
            length_of = struct.Struct(self.order + "Q").unpack_from
            data, pos, size = self.data, self.pos, self.size
            for _ in range(count):
                if pos + 8 > size:
                    raise GGUFError(_TRUNCATED)
                pos += 8 + length_of(data, pos)[0]
            if pos > size:
                raise GGUFError(_TRUNCATED)
            self.pos = pos
            return None
        if kind == _ARRAY:
            items = [self._array(keep=keep) for _ in range(count)]
            return items if keep else None
        return [self._value(kind) for _ in range(count)]


# --- the GGUF's own identity -------------------------------------------------------------------

SHA256_INDEX = "gguf-sha256.json"


def gguf_sha256(path: Path, index_dir: Path) -> str:
    """The sha256 of the whole GGUF: what the response cache and the identity key a local model
    by, so another model under the same file name never gets this one's answers.

    Hashing reads every byte (about 0.5 s per GB), so the digest is kept in
    ``<index_dir>/gguf-sha256.json`` by (real path, size, mtime, inode) and computed again only
    when one of them changes. An index that cannot be read or written is skipped (the hash is
    then computed on every run)."""
    from benchreg.core.io import atomic_write_json, sha256_file

    real = path.resolve()
    stat = real.stat()
    stamp = [stat.st_size, stat.st_mtime_ns, stat.st_ino]
    index_path = index_dir / SHA256_INDEX
    try:
        index = json.loads(index_path.read_text())
        if not isinstance(index, dict):
            index = {}
    except (OSError, ValueError):
        index = {}
    entry = index.get(str(real))
    if isinstance(entry, dict) and entry.get("stamp") == stamp and entry.get("sha256"):
        return str(entry["sha256"])
    digest = sha256_file(real)
    index[str(real)] = {"stamp": stamp, "sha256": digest}
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(index_path, index)
    except OSError:
        pass
    return digest
