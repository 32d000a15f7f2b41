"""Response cache for model systems: one sqlite file shared by runs and parallel sweep jobs.

Keys are sha256 hashes of (endpoint, model, messages, generation params) (see :func:`request_key`);
values are successful completions only (an error is never cached). The database runs in WAL mode
with a busy timeout, and every write is one autocommitted statement, so several processes can read
and write it at once without "database is locked" failures.

Location: ``cache_dir`` from the run options, else ``$BENCHREG_CACHE_DIR``, else
``$XDG_CACHE_HOME/benchreg``, else ``~/.cache/benchreg``; the file is ``responses.sqlite3``.
Modes: ``read_write`` (default), ``read_only`` (answers are looked up, nothing is written and no
file is created) and ``off`` (the file is never opened).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from benchreg.core.errors import BenchregError

MODES = ("read_write", "read_only", "off")
FILE_NAME = "responses.sqlite3"
BUSY_TIMEOUT_S = 60.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def default_cache_dir() -> Path:
    if explicit := os.environ.get("BENCHREG_CACHE_DIR"):
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "benchreg"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_key(
    endpoint: str, model: str, messages: Iterable[Mapping[str, str]], params: Mapping[str, Any]
) -> str:
    """The cache key of one chat request: everything that decides the answer, nothing else."""
    return sha256_text(
        canonical_json(
            {"endpoint": endpoint, "model": model, "messages": list(messages), "params": params}
        )
    )


@dataclass(frozen=True, slots=True)
class CacheSettings:
    mode: str
    path: Path

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> CacheSettings:
        mode = str(options.get("cache") or "read_write")
        if mode not in MODES:
            raise BenchregError(
                f"unknown cache mode {mode!r}", fix=f"set run.cache to one of {', '.join(MODES)}"
            )
        folder = options.get("cache_dir")
        root = Path(str(folder)).expanduser() if folder else default_cache_dir()
        return cls(mode, root / FILE_NAME)


class ResponseCache:
    """Look up and store completions (JSON-able dicts) by request key."""

    def __init__(self, settings: CacheSettings) -> None:
        self.settings = settings
        self.writes = 0
        self.failed_writes = 0
        self._db: sqlite3.Connection | None = None
        if settings.mode == "off":
            return
        if settings.mode == "read_only" and not settings.path.exists():
            return  # nothing cached yet, and read_only must not create anything
        self._db = _connect(settings.path, create=settings.mode == "read_write")

    @property
    def readable(self) -> bool:
        return self._db is not None

    @property
    def writable(self) -> bool:
        return self._db is not None and self.settings.mode == "read_write"

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        if self._db is None:
            return {}
        wanted = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(wanted), 500):  # stay under sqlite's bound-parameter limit
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT key, response FROM responses WHERE key IN ({marks})", chunk
            ).fetchall()
            found.update((key, json.loads(text)) for key, text in rows)
        return found

    def put(self, key: str, response: Mapping[str, Any]) -> None:
        if not self.writable:
            return
        assert self._db is not None
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, response, created) VALUES (?, ?, ?)",
                (key, canonical_json(response), time.time()),
            )
        except sqlite3.Error as exc:  # a full disk must not cost the answer itself
            self.failed_writes += 1
            if self.failed_writes == 1:
                logger.warning(f"response cache {self.settings.path}: cannot write ({exc})")
            return
        self.writes += 1

    def count(self) -> int:
        if self._db is None:
            return 0
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _connect(path: Path, *, create: bool) -> sqlite3.Connection:
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: autocommit, each statement is its own short transaction.
        db = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if create:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute(_SCHEMA)
        return db
    except (OSError, sqlite3.Error) as exc:
        raise BenchregError(
            f"cannot open the response cache: {exc}",
            where=path,
            fix="set run.cache_dir=<writable folder> or run.cache=off",
        ) from exc
