"""Response cache for model systems: one sqlite file shared by runs and parallel sweep jobs.

Keys are sha256 hashes of (endpoint, model, messages, generation params) (see :func:`request_key`);
values are successful completions only (an error is never cached). The database runs in WAL mode
with a busy timeout, and every write is one autocommitted statement, so several processes can read
and write it at once without "database is locked" failures.

Location: ``cache_dir`` from the run options, else ``$BENCHREG_CACHE_DIR``, else
``$XDG_CACHE_HOME/benchreg``, else ``~/.cache/benchreg``; the file is ``responses.sqlite3``.
Modes: ``read_write`` (default), ``read_only`` (answers are looked up, nothing is written and no
file is created) and ``off`` (the file is never opened).

A file that is not a sqlite database, or a damaged one, is never a traceback: in ``read_write``
mode it is set aside (renamed ``responses.sqlite3.corrupt-<time>-<pid>``) and an empty cache is
built in its place, with a warning saying so; in ``read_only`` mode it is not used (a warning),
since that mode writes nothing. A cache that breaks during a run is not used for the rest of it.
"""

from __future__ import annotations

import contextlib
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
from benchreg.core.io import sorted_json
from benchreg.core.provenance import scrub

MODES = ("read_write", "read_only", "off")
FILE_NAME = "responses.sqlite3"
SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 60.0
# answers written in one transaction: a commit per answer cost 20 us of a request's CPU; the
# model systems flush what is pending at most FLUSH_AFTER_S after it was put
FLUSH_EVERY = 64
FLUSH_AFTER_S = 0.05
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""
# what a server last said pins its weights, by (endpoint, model name): a run that cannot reach
# the server to ask (model.preflight=false, a replay with the server down) keys its answers by
# the weights last seen there instead of missing every answer it cached
_SERVED_SCHEMA = """
CREATE TABLE IF NOT EXISTS served (
    scope TEXT PRIMARY KEY,
    pin TEXT NOT NULL,
    seen REAL NOT NULL
)
"""


def default_cache_dir() -> Path:
    if explicit := os.environ.get("BENCHREG_CACHE_DIR"):
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "benchreg"


def canonical_json(value: Any) -> str:
    return sorted_json(value)  # json.dumps(sort_keys, compact, non-ASCII kept): the same text


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_key(
    endpoint: str,
    model: str,
    messages: Iterable[Mapping[str, str]],
    params: Mapping[str, Any],
    weights: Mapping[str, Any] | None = None,
) -> str:
    """The cache key of one chat request: everything that decides the answer, nothing else.
    ``weights``: what the server said pins the weights it serves (None: it said nothing, and the
    key is the one benchreg used before it asked)."""
    value = {"endpoint": endpoint, "model": model, "messages": list(messages), "params": params}
    if weights:
        value["weights"] = dict(weights)
    return sha256_text(canonical_json(value))


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
        self.set_aside: str | None = None  # where a corrupt file was moved to
        self._pending: dict[str, str] = {}  # put, not written yet (key -> stored text)
        self._db: sqlite3.Connection | None = None
        if settings.mode == "off":
            return
        if settings.mode == "read_only" and not settings.path.exists():
            return  # nothing cached yet, and read_only must not create anything
        create = settings.mode == "read_write"
        try:
            self._db = _connect(settings.path, create=create)
        except CorruptCache as exc:
            if not create:
                logger.warning(
                    f"response cache {settings.path} is unreadable ({exc.reason}): not used "
                    "(run.cache=read_only writes nothing; run.cache=read_write sets it aside "
                    "and rebuilds it)"
                )
                return
            moved = _set_aside(settings.path, exc)
            self.set_aside = str(moved) if moved else None
            where = f"set aside as {moved}" if moved else "set aside by a parallel job"
            logger.warning(
                f"response cache {settings.path} was unreadable ({exc.reason}): {where}, and "
                "rebuilt empty (answers not found in it are asked again)"
            )
            self._db = _connect(settings.path, create=True)

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
        if self._pending:
            for key in wanted:
                if key in self._pending and (value := _stored(self._pending[key])) is not None:
                    found[key] = value
            wanted = [key for key in wanted if key not in found]
        for start in range(0, len(wanted), 500):  # stay under sqlite's bound-parameter limit
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            try:
                rows = self._db.execute(
                    f"SELECT key, response FROM responses WHERE key IN ({marks})", chunk
                ).fetchall()
            except sqlite3.Error as exc:
                self._broken(exc)
                return found
            for key, text in rows:
                value = _stored(text)
                if value is not None:  # an unreadable entry is asked again
                    found[key] = value
        return found

    def put(self, key: str, response: Mapping[str, Any]) -> None:
        """Store an answer: written with the next :meth:`flush`, which comes once
        ``FLUSH_EVERY`` answers are pending (and when the cache is closed; a model system also
        flushes ``FLUSH_AFTER_S`` after the first pending one)."""
        if not self.writable:
            return
        self._pending[key] = canonical_json(scrub(dict(response)))  # no secret stored
        if len(self._pending) >= FLUSH_EVERY:
            self.flush()

    @property
    def pending(self) -> int:
        return len(self._pending)

    def flush(self) -> None:
        """Write the pending answers, in one transaction."""
        if not self._pending:
            return
        now = time.time()
        rows = [(key, text, now) for key, text in self._pending.items()]
        self._pending.clear()
        if self._db is None:
            return
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT OR REPLACE INTO responses (key, response, created) VALUES (?, ?, ?)", rows
            )
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:  # a full disk must not cost the answers themselves
            self._failed(exc, len(rows))
            return
        self.writes += len(rows)

    def _failed(self, exc: sqlite3.Error, rows: int) -> None:
        if self._db is not None and self._db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
        first = self.failed_writes == 0
        self.failed_writes += rows
        if _corruption(exc):
            self._broken(exc)
        elif first:
            logger.warning(f"response cache {self.settings.path}: cannot write ({exc})")

    def remember_served(self, scope: str, pin: Mapping[str, Any]) -> None:
        """Record what pins the weights served at ``scope`` (read_write only; a failure to
        write costs nothing but the memory)."""
        if not self.writable:
            return
        assert self._db is not None
        with contextlib.suppress(sqlite3.Error):
            self._db.execute(
                "INSERT OR REPLACE INTO served (scope, pin, seen) VALUES (?, ?, ?)",
                (scope, canonical_json(scrub(dict(pin))), time.time()),
            )

    def served_before(self, scope: str) -> tuple[dict[str, Any], float] | None:
        """The pin last recorded for ``scope`` and when (None: none, or a cache written before
        the table existed and opened read_only)."""
        if self._db is None:
            return None
        try:
            row = self._db.execute(
                "SELECT pin, seen FROM served WHERE scope = ?", (scope,)
            ).fetchone()
            pin = json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError):
            return None
        return (pin, float(row[1])) if isinstance(pin, dict) and pin else None

    def _broken(self, exc: sqlite3.Error) -> None:
        """The database failed under us: warn once and go on without it."""
        logger.warning(
            f"response cache {self.settings.path} failed ({exc}): not used for the rest of this "
            "run (the next read_write run sets a damaged file aside and rebuilds it)"
        )
        self.close()

    def count(self) -> int:
        self.flush()
        if self._db is None:
            return 0
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self.flush()
        if self._db is not None:
            self._db.close()
            self._db = None


class CorruptCache(Exception):
    """The file is not a sqlite database, or a damaged one (``stat``: what was found)."""

    def __init__(self, reason: str, stat: os.stat_result | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.stat = stat


def _corruption(exc: sqlite3.Error) -> bool:
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        return True
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text


def _stored(text: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        return None
    return value


def _connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """Open (and with ``create``, initialise) the cache; CorruptCache for a file that is not a
    sqlite database or a damaged one, BenchregError for anything else (a folder, permissions)."""
    stat: os.stat_result | None = None
    db: sqlite3.Connection | None = None
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            stat = path.stat()
            if path.is_file() and stat.st_size:
                with path.open("rb") as handle:
                    header = handle.read(len(SQLITE_HEADER))
                if header != SQLITE_HEADER:
                    raise CorruptCache("not a sqlite database", stat)
        # isolation_level=None: autocommit, each statement is its own short transaction.
        db = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if create:
            _initialise(db)
        # reads the schema: a damaged file says so here, not in the middle of the run
        db.execute("SELECT key FROM responses LIMIT 1").fetchall()
        return db
    except sqlite3.Error as exc:
        if db is not None:
            db.close()
        if _corruption(exc):
            raise CorruptCache(str(exc), stat) from None
        if not create and "no such table" in str(exc):
            raise CorruptCache("not a benchreg response cache (no responses table)", stat) from None
        raise _open_error(path, exc) from None
    except OSError as exc:
        raise _open_error(path, exc) from None


def _initialise(db: sqlite3.Connection) -> None:
    """WAL mode and the schema. Switching the journal mode takes an exclusive lock that sqlite
    does not wait for through the busy handler, so parallel jobs creating the file at once would
    see "database is locked": skip the switch once the file is WAL, and retry busy errors until
    the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    pause = 0.01
    while True:
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute(_SCHEMA)
            db.execute(_SERVED_SCHEMA)
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.25)


def _busy(exc: sqlite3.Error) -> bool:
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    text = str(exc).lower()
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text or "busy" in text


def _open_error(path: Path, exc: BaseException) -> BenchregError:
    return BenchregError(
        f"cannot open the response cache: {exc}",
        where=path,
        fix="set run.cache_dir=<writable folder> or run.cache=off",
    )


def _set_aside(path: Path, found: CorruptCache) -> Path | None:
    """Rename the corrupt file (and its -wal/-shm) out of the way. When another process did so
    first (the file at ``path`` is no longer the one found corrupt), leave its new one alone."""
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    try:
        now = path.stat()
    except FileNotFoundError:
        return None  # already moved by a parallel job
    if found.stat is not None and (now.st_ino, now.st_dev) != (
        found.stat.st_ino,
        found.stat.st_dev,
    ):
        return None  # a parallel job already replaced it
    try:
        os.replace(path, target)
        for suffix in ("-wal", "-shm"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                os.replace(side, target.with_name(target.name + suffix))
    except FileNotFoundError:
        return None  # a parallel job moved it between the stat and the rename
    except OSError as exc:
        raise BenchregError(
            f"the response cache is unreadable ({found.reason}) and cannot be set aside: {exc}",
            where=path,
            fix="delete or move the file, or set run.cache_dir=<another folder> or run.cache=off",
        ) from None
    return target
