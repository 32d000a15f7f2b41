"""A large JSON list file loaded by several processes at once, each building the rows of one part
(a JSON Lines file too: :func:`lines_loaded_in_parts`, the later parts in forked copies).

Decoding and validating is CPU-bound Python, which threads cannot run in parallel; processes can.
The loading process cuts the file at item boundaries (:func:`benchreg.core.reader.list_parts`),
starts one worker process per part but the first (a fork of itself when no other thread runs,
else ``python -m benchreg.core.partload``: a fresh interpreter, never a re-run of the caller's
``__main__``), builds the first part's rows itself,
then reads the workers' rows files (:func:`benchreg.core.checkcache.write_rows`; the loaded-data
cache copies them into its entry as they are).

The rows are those the loader's own one-process read gives, in file order: each part is read by
the same reader and built by the same function (``rows_of``, named ``"module:function"``).
Anything else gives None and the loader reads the whole file in one process, which names the
problem exactly as it always does: a part that is not well-formed, a rule broken in any part
(``rows_of`` raised :class:`BenchregError`), a worker that failed or died, an id repeated across
parts (checked by the caller).

Workers: ``$BENCHREG_LOAD_WORKERS`` (0 = one process), else one fewer than the CPUs this process
may use (at most :data:`MAX_PROCESSES` processes in all) for a file of :data:`MIN_BYTES` or more.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from benchreg.core import checkcache, digests, idle
from benchreg.core.children import die_with_parent
from benchreg.core.errors import BenchregError
from benchreg.core.fastjson import line_start_after
from benchreg.core.reader import ListPart, PartUnreadable, iter_list_part, list_parts
from benchreg.core.threads import usable_cpus

MIN_BYTES = 32 << 20  # first runs measured: 31 MiB 1.66 -> 1.53 s with a worker, 62 MiB 3.0 -> 2.5
MAX_PROCESSES = 4
WORKERS_ENV = "BENCHREG_LOAD_WORKERS"
PARENT_SHARE = 1.1  # this process's part is larger: a started worker imports first
FORKED_SHARE = 0.95  # a forked worker starts at once; this process also reads its rows after
FORK = True  # workers forked from this process where that is safe (see _forked)
PART_PROBLEM_EXIT = 3  # a worker's part has a problem: the loading process reads the whole file

RowsOf = Callable[..., list[Any]]  # (records of one part, *args) -> rows


@dataclass(frozen=True)
class PartsLoaded:
    rows: list[Any]  # every row, in file order
    rows_files: list[Path]  # with ``rows_files=True``: rows files holding ``rows``, in order
    worker_peak_rss_mib: list[float]  # each worker's peak (a forked one: with the pages it shares)


def worker_count(path: Path) -> int:
    setting = os.environ.get(WORKERS_ENV, "").strip()
    if setting:
        try:
            return max(0, int(setting))
        except ValueError:
            raise BenchregError(
                f"{WORKERS_ENV}={setting!r} is not a whole number",
                fix=f"set {WORKERS_ENV} to 0 (load in one process) or a number of workers",
            ) from None
    try:
        if path.stat().st_size < MIN_BYTES or not hasattr(os, "wait4"):  # wait4: not on Windows
            return 0
    except OSError:
        return 0
    return min(usable_cpus(), MAX_PROCESSES) - 1


@contextmanager
def loaded_in_parts(
    path: Path,
    rows_of: str,
    args: Iterable[Any] = (),
    *,
    strings_shared: bool = False,
    rows_files: bool = False,
) -> Iterator[PartsLoaded | None]:
    """The rows of ``path`` built by ``rows_of(records, *args)`` over its parts in parallel, or
    None (one process is enough, or it has to read the file itself: see the module).

    With ``rows_files`` this process also writes its own part's rows file while the workers are
    still at theirs (for the loaded-data cache, which then copies every part's file as it is);
    the files live until the block ends. ``strings_shared``: see
    :func:`benchreg.core.checkcache.write_rows`."""
    workers = worker_count(path)
    share = FORKED_SHARE if forking() else PARENT_SHARE
    parts = list_parts(path, [share] + [1.0] * workers) if workers else None
    if parts is None or len(parts) < 2:
        yield None
        return
    build = {"rows_of": rows_of, "args": list(args), "strings_shared": strings_shared}
    with tempfile.TemporaryDirectory(prefix="benchreg-parts-") as tmp:
        yield _load(parts, build, Path(tmp), rows_files)


def _load(
    parts: list[ListPart], build: dict[str, Any], tmp: Path, rows_files: bool
) -> PartsLoaded | None:
    jobs = [_start(part, build, tmp / f"part{k}") for k, part in enumerate(parts[1:], start=1)]
    own_file = tmp / "part0.rows"
    try:
        rows = _rows(parts[0], build)
        if rows is None:
            return None
        if rows_files:
            checkcache.write_rows(own_file, rows, strings_shared=build["strings_shared"])
        peaks = []
        for process, rows_file in jobs:
            code, peak = _wait(process)
            peaks.append(peak)
            more = checkcache.read_rows(rows_file) if code == 0 else None
            if more is None:
                _log_failure(rows_file, code)
                return None
            rows += more
    finally:
        for process, _ in jobs:
            if process.poll() is None:  # this process's own part failed: stop the rest
                process.kill()
                process.wait()
    return PartsLoaded(rows, [own_file, *[f for _, f in jobs]] if rows_files else [], peaks)


def line_cuts(path: Path, shares: list[float]) -> list[tuple[int, int]]:
    """Byte ranges of ``path`` in proportion to ``shares``, each starting at a line start (empty
    ranges left out)."""
    size, total = path.stat().st_size, sum(shares)
    bounds, done = [0], 0.0
    for share in shares[:-1]:
        done += share
        bounds.append(max(bounds[-1], line_start_after(path, int(size * done / total))))
    bounds.append(size)
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


@dataclass(frozen=True)
class LinesLoaded:
    own: list[Any]  # the rows of the file's first part, built by this process
    theirs: list[Any]  # the later parts' rows, read back from the copies' rows files, in order
    rows_files: list[Path]  # the copies' rows files (for the loaded-data cache), in order


@contextmanager
def lines_loaded_in_parts(
    path: Path,
    rows_of: Callable[[int, int], list[Any] | None],
    *,
    strings_shared: bool = False,
    defer_inputs: bool = False,
) -> Iterator[LinesLoaded | None]:
    """The rows of a large JSON Lines file, ``rows_of(start, end)`` of each part (byte ranges
    cut at line starts), the first built by this process and every other by a forked copy of
    it at the same time; None where copies are not worth it or not safe (see :func:`forking`),
    or when any part's ``rows_of`` gave None or its copy failed: the caller then reads the file
    in one process, which names any problem. While waiting, this process does the work offered
    to it (core.idle). ``strings_shared``, ``defer_inputs``: the copies' rows files, see
    :func:`benchreg.core.checkcache.store_loaded`; the rows files live until the block ends."""
    workers = worker_count(path)
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    if workers < 1 or not size or not forking():
        yield None
        return
    ranges = line_cuts(path, [1.0] * (workers + 1))
    with tempfile.TemporaryDirectory(prefix="benchreg-lines-") as tmp:
        copies: list[tuple[Path, ForkedWorker]] = []

        def work(start: int, end: int, out: Path) -> Callable[[], tuple[int, Any]]:
            def run() -> tuple[int, Any]:
                rows = rows_of(start, end)
                if rows is None:
                    return PART_PROBLEM_EXIT, None
                checkcache.write_rows(
                    out, rows, strings_shared=strings_shared, defer_inputs=defer_inputs
                )
                return 0, rows

            return run

        try:
            for k, (start, end) in enumerate(ranges[1:], start=1):
                out = Path(tmp) / f"part{k}.rows"
                copies.append((out, fork_copy(work(start, end, out), out.with_suffix(".log"))))
            yield _lines_joined(rows_of(*ranges[0]), copies)
        finally:
            for _, copy in copies:
                if copy.poll() is None:  # a part failed: stop the rest
                    copy.kill()
                    copy.wait()


def _lines_joined(
    own: list[Any] | None, copies: list[tuple[Path, ForkedWorker]]
) -> LinesLoaded | None:
    if own is None:
        return None
    idle.run_offered()
    theirs: list[Any] = []
    for out, copy in copies:
        code = copy.wait()
        rows = checkcache.read_rows(out) if code == 0 else None
        if rows is None:
            _log_failure(out, code)
            return None
        theirs += rows
    return LinesLoaded(own, theirs, [out for out, _ in copies])


def _wait(process: Worker) -> tuple[int, float]:
    """The worker's exit code and peak RSS in MiB."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss / 1024


def _rows(part: ListPart, build: dict[str, Any]) -> list[Any] | None:
    module, _, name = build["rows_of"].partition(":")
    rows_of: RowsOf = getattr(importlib.import_module(module), name)
    try:
        return rows_of(iter_list_part(part), *build["args"])
    except (BenchregError, PartUnreadable):
        return None


def _start(part: ListPart, build: dict[str, Any], out: Path) -> tuple[Worker, Path]:
    spec = {
        "part": [
            str(part.path),
            part.start,
            part.end,
            part.token.decode("ascii"),
            part.close,
            part.opening,
        ],
        "out": str(out),
        "parent": os.getpid(),
        **build,
    }
    log_path = out.with_suffix(".log")
    if forking():
        return _forked(spec, log_path), out.with_suffix(".rows")
    python_path = os.pathsep.join(entry for entry in sys.path if entry)  # what imports here
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "benchreg.core.partload", json.dumps(spec)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env={**os.environ, "PYTHONPATH": python_path},
        )
    return process, out.with_suffix(".rows")


def forking() -> bool:
    """Whether work can go to a forked copy of this process: no other thread runs (a copy holds
    just the forking thread, and a lock another thread held would stay locked in it)."""
    # digests.prefetch's threads only hash a file: a copy never waits for them (see there)
    others = threading.active_count() - digests.hashing()
    return FORK and hasattr(os, "fork") and others == 1


class ForkedWorker:
    """A worker forked from this process, with what :func:`_load` uses of a Popen."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        with suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


Worker = subprocess.Popen[bytes] | ForkedWorker


def _forked(spec: dict[str, Any], log_path: Path) -> ForkedWorker:
    """A worker that is a copy of this process: it starts at once, with everything imported
    (a new interpreter spends about 0.6 s importing before its first item)."""
    return fork_copy(lambda: _work(spec), log_path)


def fork_copy(work: Callable[[], tuple[int, Any]], log_path: Path) -> ForkedWorker:
    """``work()`` in a copy of this process (only where :func:`forking`), its output in
    ``log_path``; ``work`` returns the exit code and what the copy keeps until it exits (see
    :func:`_end`). Whatever happens, the copy never returns into the caller's code; a killed
    loading process takes it along."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):  # or the copy would write this process's pending output again
            stream.flush()
    parent = os.getpid()
    with log_path.open("wb") as log:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                for signum in (signal.SIGINT, signal.SIGTERM):
                    signal.signal(signum, signal.SIG_DFL)  # not this process's handlers
                os.dup2(log.fileno(), 1)
                os.dup2(log.fileno(), 2)
                code = 4  # the loading process was gone before the work began
                if die_with_parent(signal.SIGKILL, parent):
                    code, _kept_until_exit = work()
            except BaseException:
                with suppress(BaseException):
                    traceback.print_exc()
            finally:
                with suppress(BaseException):
                    _end(code)
                os._exit(code)
    return ForkedWorker(pid)


def _log_failure(rows_file: Path, code: int) -> None:
    log = rows_file.with_suffix(".log")
    last = log.read_text("utf-8", "replace").strip().splitlines()[-1:] if log.exists() else []
    logger.debug(
        f"load worker exited with {code} ({' '.join(last) or 'no message'}): reading the whole "
        "file in this process"
    )


def _work(spec: dict[str, Any]) -> tuple[int, list[Any] | None]:
    """A worker: the rows of one part into its rows file; exit code 3 when the part has a problem
    (the loading process then reads the whole file and reports it). Returns the code and the
    rows, for the process to end without freeing them (see :func:`_end`)."""
    from benchreg.core.reader import gc_paused

    # a killed loading process takes its workers along
    if not die_with_parent(signal.SIGKILL, spec["parent"]):
        return 4, None  # it was gone before that
    with gc_paused():
        path, start, end, token, close, opening = spec["part"]
        part = ListPart(Path(path), start, end, token.encode("ascii"), close, opening)
        rows = _rows(part, spec)
        if rows is None:
            return PART_PROBLEM_EXIT, None
        checkcache.write_rows(
            Path(spec["out"]).with_suffix(".rows"), rows, strings_shared=spec["strings_shared"]
        )
    return 0, rows


def _end(code: int) -> None:
    """End the worker at once: the loading process waits for its exit, and freeing the rows
    one object at a time (what a normal exit does) takes about a tenth of the part's load
    (measured: 0.45 s for 50,000 reaction-MC questions). Its rows file is written and closed;
    what it logged is flushed first."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_code, _kept_until_exit = _work(json.loads(sys.argv[1]))
    _end(exit_code)
