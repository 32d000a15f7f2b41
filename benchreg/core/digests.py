"""sha256 of files, each computed once: in this process, and across runs through a small memo.

A run records the sha256 of its data and predictions, and the caches are keyed by it, so a
file is hashed on every run; at 230 MB/s (this machine's OpenSSL) a 700 MB run file costs 3 s
each time. The memo keeps a digest under the file's identity as the file system states it:
real path, device, inode, size, mtime_ns and ctime_ns. Writing to a file or replacing it changes
at least one of them (ctime cannot be set back from user space: `touch -d` and `os.utime`
change it to now), as git's index and make rely on. A file changed in the last two seconds is
hashed again each time and never memoised: a coarse file-system clock could still give a later
write the same times ("racy" timestamps).

The memo lives in the cache folder (`BENCHREG_CACHE_DIR`, `sha256/`), one small file a digest;
`BENCHREG_VALIDATION_CACHE=off` turns it off with the other caches.

:func:`prefetch` hashes a file in a thread of its own while the caller reads it (OpenSSL
releases the GIL while it hashes): a predictions file is hashed beside its decoding, so the
run's record of it costs no wall time on a second core.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
import time
from pathlib import Path

RACY_NS = 2_000_000_000
BLOCK = 1 << 20

Identity = tuple[str, int, int, int, int, int]
_IN_PROCESS: dict[Identity, str] = {}
_PENDING: dict[Identity, tuple[threading.Thread, list[str]]] = {}  # prefetch's running hashes
THREAD_NAME = "benchreg-sha256"
# a forked copy holds no thread of this process: it hashes for itself
os.register_at_fork(after_in_child=_PENDING.clear)


def sha256_file(path: Path) -> str:
    """The sha256 of ``path``'s bytes (hex), from this process's or the memo's digest of the same
    file identity when there is one (or from :func:`prefetch`'s hash of it)."""
    identity, settled = _identity(path)
    digest = _IN_PROCESS.get(identity)
    if digest is not None:
        return digest
    memo = _memo_path(identity) if settled else None
    digest = _read_memo(memo) if memo is not None else None
    if digest is None:
        pending = _PENDING.pop(identity, None)
        if pending is not None:
            pending[0].join()
        digest = pending[1][0] if pending and pending[1] else _hash(identity[0])
        if memo is not None:
            _write_memo(memo, digest)
    if settled:
        _IN_PROCESS[identity] = digest
    return digest


def prefetch(path: Path) -> None:
    """Start hashing ``path`` in a thread when no digest of it is known (best effort: a file
    that cannot be read is left to :func:`sha256_file`, which reports it)."""
    try:
        identity, settled = _identity(path)
    except OSError:
        return
    if identity in _IN_PROCESS or identity in _PENDING:
        return
    memo = _memo_path(identity) if settled else None
    if memo is not None and _read_memo(memo) is not None:
        return
    result: list[str] = []

    def work() -> None:
        with contextlib.suppress(OSError):  # hashed again, and reported, by sha256_file
            result.append(_hash(identity[0]))

    thread = threading.Thread(target=work, name=THREAD_NAME, daemon=True)
    _PENDING[identity] = (thread, result)
    thread.start()


def hashing() -> int:
    """How many of :func:`prefetch`'s threads are running."""
    return sum(1 for thread, _ in list(_PENDING.values()) if thread.is_alive())


def _identity(path: Path) -> tuple[Identity, bool]:
    """The file's identity, and whether it is settled (not changed in the last two seconds)."""
    real = os.path.realpath(path)
    st = os.stat(real)
    identity = (real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    # a later write sets both times to its now: it could go unseen only if both are that recent
    settled = time.time_ns() - min(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS
    return identity, settled


def _hash(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def _memo_path(identity: Identity) -> Path | None:
    from benchreg.core import checkcache

    if not checkcache.enabled():
        return None
    key = hashlib.blake2b(json.dumps(identity).encode("utf-8"), digest_size=16).hexdigest()
    return checkcache.cache_dir() / "sha256" / key[:2] / key


def _read_memo(memo: Path) -> str | None:
    try:
        text = memo.read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else None


def _write_memo(memo: Path, digest: str) -> None:
    """Best effort: a cache folder that cannot be written only costs hashing again."""
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=memo.parent, prefix=".", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(digest)
        os.replace(tmp, memo)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
