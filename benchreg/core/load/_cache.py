"""The loaded-data cache: a value built from data files, kept on disk under their sha256.

One file per (name, key, file paths) under ``<cache dir>/loaded/``: a JSON header line (name,
key, benchreg and Python versions, every file's sha256) and the value in :mod:`marshal`'s format
(the fastest the standard library reads back; its format may change with the Python version,
which the header therefore names). An entry is used only when its header equals the one the
files have now; writing one replaces the entry of older contents of the same files. Entries are
written to a temp file and renamed (parallel processes may write the same entry), and a cache
folder that cannot be written is skipped: the cache only ever saves time.
"""

from __future__ import annotations

import json
import marshal
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from loguru import logger

from benchreg.core.io import atomic_write_parts, sha256_file, sha256_text
from benchreg.core.version import __version__

CACHE_MIN_BYTES = 1 << 20  # smaller files are read faster than an entry is checked and read
SWITCH_ENV = "BENCHREG_DATA_CACHE"  # off | 0 | false | no: no run reads or writes the cache


def cache_dir() -> Path:
    """``$BENCHREG_CACHE_DIR``, else ``$XDG_CACHE_HOME/benchreg``, else ``~/.cache/benchreg``."""
    explicit = os.environ.get("BENCHREG_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "benchreg"


def cache_enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "").lower() not in ("0", "off", "false", "no")


class Entry:
    """Where the value of (name, key, files) is kept, and the header it must carry."""

    def __init__(self, name: str, key: Mapping[str, Any], files: Sequence[Path]) -> None:
        where = {
            "name": name,
            "key": dict(key),
            "files": [str(Path(f).resolve()) for f in files],
        }
        self.path = cache_dir() / "loaded" / f"{sha256_text(_json(where))[:40]}.marshal"
        contents = {
            **where,
            "sha256": [sha256_file(Path(f)) for f in files],
            "benchreg": __version__,
            "python": sys.version,
        }
        self.header = _json(contents).encode("utf-8") + b"\n"

    def read(self) -> Any | None:
        """The kept value, or None (no entry, another content, or a damaged file)."""
        try:
            with self.path.open("rb") as handle:
                if handle.readline() != self.header:
                    return None
                return marshal.loads(handle.read())
        except (OSError, EOFError, ValueError, TypeError):
            return None

    def write(self, value: Any) -> None:
        try:
            blob = marshal.dumps(value)
        except ValueError:  # a value marshal cannot hold: not kept
            logger.debug(f"{self.path.name}: the value cannot be kept in the cache")
            return
        try:
            atomic_write_parts(self.path, [self.header, blob], durable=False)
        except OSError as exc:
            logger.debug(f"loaded-data cache not written ({exc.strerror})")


def worth_keeping(files: Sequence[Path]) -> bool:
    """Whether the files are large enough for the cache (False when one cannot be read: the
    loader's own read then reports it)."""
    try:
        return sum(Path(f).stat().st_size for f in files) >= CACHE_MIN_BYTES
    except OSError:
        return False


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
