"""Many processes creating the response cache at the same moment: none may fail with "locked"."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from benchreg.systems.cache import FILE_NAME, CacheSettings, ResponseCache

PROCESSES = 8
ROUNDS = 3


def _open_and_write(folder: str, barrier: Any, index: int, errors: Any) -> None:
    barrier.wait(timeout=30)
    try:
        cache = ResponseCache(CacheSettings("read_write", Path(folder) / FILE_NAME))
        cache.put(f"k{index}", {"text": str(index)})
        cache.close()  # answers are written in groups: at the latest when the cache is closed
    except Exception as exc:  # reported to the parent, which asserts on it
        errors.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_simultaneous_first_open_never_reports_locked(tmp_path: Path, round_: int) -> None:
    context = mp.get_context("spawn")
    barrier = context.Barrier(PROCESSES)
    errors = context.Queue()
    procs = [
        context.Process(target=_open_and_write, args=(str(tmp_path), barrier, i, errors))
        for i in range(PROCESSES)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=90)
        assert proc.exitcode == 0
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert found == []
    db = sqlite3.connect(tmp_path / FILE_NAME)
    try:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == PROCESSES
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()
