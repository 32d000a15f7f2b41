"""One export at a time per local store: the parallel jobs of a sweep (`hydra/launcher=joblib`)
each export as they end, and two processes creating one sqlite store's tables at once break
it (`table ... already exists`); held over the look-up and the logging, the lock also keeps two
processes from logging one job twice."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchreg.core.errors import BenchregError


@contextmanager
def exclusive(lock_file: Path | None) -> Iterator[None]:
    """Wait for and hold an exclusive flock on ``lock_file`` (None: no lock). The file stays:
    removing it would let a process that opened it before the removal lock a stale inode."""
    if lock_file is None:
        yield
        return
    try:
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        handle = lock_file.open("a")
    except OSError as exc:
        raise BenchregError(
            f"cannot write beside the store ({exc.strerror or type(exc).__name__})",
            where=lock_file.parent,
            fix="pass a store or --dir in a folder you can write to",
        ) from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
