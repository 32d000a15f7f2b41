"""A batch of sweep jobs run by forked copies of the sweep process, each taking the next job.

The in-process launcher runs its first job alone (it fills the data caches every later job of a
PromptCBLUE sweep reads), then forks ``processes - 1`` copies of itself: every import, registry,
bound task entry, composed config template and loaded data set is already there, and a page is
copied only when one side writes it (objects are frozen out of the garbage collector's reach for
the time, so that its passes do not touch them). Each process takes the next job number from one
pipe (``os.read`` of 4 bytes is atomic), so a slow job never holds the others back, and runs it
exactly as the one-process launcher would (same composition, same ``run_job``). A forked copy
pickles each job's return into its own file as soon as the job ends; the sweep process reads them
when every copy has exited.

- A copy that ends without reporting one of its jobs (killed, out of memory) leaves that job to the
  sweep process, which runs it once more (its run folder resumes from its journal).
- Interrupted (Ctrl-C, SIGTERM), the sweep process stops its copies with SIGTERM, waits for them
  (each stops as a run does: its answers so far are journaled), then stops itself; a copy whose
  parent dies gets SIGTERM from the kernel (``PR_SET_PDEATHSIG``).
- Forking pays only while the sweep process is small: the copies end up writing (hence copying)
  most of the pages they share, through reference counts and the allocator's reuse of freed
  blocks (a PromptCBLUE 80,000-sample sweep: 378 MiB at the fork, 646 MiB for the two processes,
  where one process peaks at 383 MiB). A sweep process holding more than :data:`FORK_MAX_MIB` after
  its first job runs the rest itself.
- A copy ends with ``os._exit``: none of the sweep process's exit handlers, ``finally`` blocks or
  buffered files run twice.
- Standard output is line-buffered while the copies run: a block-buffered stream (a pipe, a file)
  would be flushed in 8 KiB pieces that end mid-line, and two processes' pieces would interleave
  inside lines. One line is one ``write`` (atomic on a pipe up to 4 KiB).
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import pickle
import signal
import struct
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hydra.core.utils import JobReturn
from loguru import logger

from benchreg.core.threads import usable_cpus

_NUMBER = struct.Struct("<I")
FORK_MAX_MIB = 256  # resident size above which the sweep process does not fork (see the module)
PIPE_JOBS = 16_000  # job numbers written to the pipe at once (a pipe holds 64 KiB)
STOP_WAIT_S = 30.0  # after SIGTERM, how long a copy gets to stop before it is killed

Job = tuple[int, Sequence[str]]  # (job number, overrides)


def run_forked(
    run: Callable[[int, Sequence[str]], JobReturn], jobs: Sequence[Job], processes: int
) -> list[JobReturn]:
    """``[run(*job) for job in jobs]``, in ``processes`` processes (this one included); the
    returns are in the order of ``jobs``."""
    if processes <= 1 or len(jobs) < 2 or len(jobs) > PIPE_JOBS or _too_large_to_fork():
        return [run(*job) for job in jobs]
    processes = min(processes, len(jobs))
    logger.info(f"sweep: the next {len(jobs)} jobs run in {processes} processes")
    read_end, write_end = os.pipe()
    os.write(write_end, b"".join(_NUMBER.pack(k) for k in range(len(jobs))))
    os.close(write_end)  # once every number is taken, a read returns b"": no job left
    children: list[int] = []
    returns: dict[int, JobReturn] = {}
    parent = os.getpid()
    with tempfile.TemporaryDirectory(prefix="benchreg-sweep-") as tmp, _whole_lines():
        folder = Path(tmp)
        gc.freeze()
        try:
            for worker in range(1, processes):
                pid = os.fork()
                if pid == 0:
                    _work(run, jobs, read_end, folder / f"{worker}.pickle", parent)  # no return
                children.append(pid)
            while (k := _next(read_end)) is not None:
                returns[k] = run(*jobs[k])
        except BaseException:
            _stop(children)
            raise
        finally:
            gc.unfreeze()
            os.close(read_end)
        _wait(children)
        for path in sorted(folder.glob("*.pickle")):
            returns.update(_read_returns(path))
    for k, job in enumerate(jobs):
        if k not in returns:  # its process ended before reporting it
            logger.warning(f"sweep: job {job[0] + 1} ended with its process; running it again")
            returns[k] = run(*job)
    return [returns[k] for k in range(len(jobs))]


@contextlib.contextmanager
def _whole_lines() -> Iterator[None]:
    """Standard output and error flushed, then line-buffered until the block ends."""
    for stream in (sys.stdout, sys.stderr):  # whatever they are: nothing buffered is copied
        with contextlib.suppress(Exception):
            stream.flush()
    streams = [s for s in (sys.stdout, sys.stderr) if isinstance(s, io.TextIOWrapper)]
    before = [s.line_buffering for s in streams]
    for stream in streams:
        stream.reconfigure(line_buffering=True)
    try:
        yield
    finally:
        for stream, setting in zip(streams, before, strict=True):
            with contextlib.suppress(Exception):
                stream.reconfigure(line_buffering=setting)


def _too_large_to_fork() -> bool:
    try:
        resident_pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return False
    return resident_pages * os.sysconf("SC_PAGE_SIZE") > FORK_MAX_MIB * 2**20


def _next(read_end: int) -> int | None:
    data = os.read(read_end, _NUMBER.size)
    return _NUMBER.unpack(data)[0] if data else None


def _work(
    run: Callable[[int, Sequence[str]], JobReturn],
    jobs: Sequence[Job],
    read_end: int,
    out: Path,
    parent: int,
) -> None:
    """A forked copy's whole life: run jobs until none is left, then ``os._exit``."""
    from benchreg.core.children import die_with_parent

    code = 0
    try:
        if not die_with_parent(signal.SIGTERM, parent):
            raise KeyboardInterrupt  # the sweep process is gone already
        with out.open("ab") as sink:
            while (k := _next(read_end)) is not None:
                sink.write(_pickled(k, run(*jobs[k])))
                sink.flush()
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _pickled(k: int, ret: JobReturn) -> bytes:
    try:
        return pickle.dumps((k, ret))
    except Exception as exc:  # a return value that cannot travel: say so instead
        ret.return_value = f"(the job's return could not be passed on: {type(exc).__name__})"
        return pickle.dumps((k, ret))


def _read_returns(path: Path) -> dict[int, JobReturn]:
    out: dict[int, JobReturn] = {}
    with path.open("rb") as source:
        while True:
            try:
                k, ret = pickle.load(source)
            except EOFError:
                return out
            except Exception:  # a record cut short by a killed process: its job runs again
                return out
            out[k] = ret


def _wait(children: list[int]) -> None:
    for pid in children:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _stop(children: list[int]) -> None:
    """SIGTERM to each copy still running, then wait for them (bounded; then SIGKILL)."""
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_S
    for pid in children:
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done:
                break
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
                break
            time.sleep(0.05)


def sweep_processes(setting: Any, jobs: Sequence[Sequence[str]], master_model: str | None) -> int:
    """How many processes run a batch: ``setting`` is ``hydra.sweeper.workers`` (``auto`` or a
    positive integer). ``auto``: one per CPU this process may use (at most :data:`AUTO_MAX`) when
    every job's model answers from the run's inputs alone (`predictions`, `baseline`, `random`:
    CPU-bound, no server, no requests), else one; an integer is taken as it is."""
    if not hasattr(os, "fork") or len(jobs) < 2:
        return 1
    if setting == "auto":
        from benchreg.systems.offline import OFFLINE_SYSTEMS

        if not all(job_model(job, master_model) in OFFLINE_SYSTEMS for job in jobs):
            return 1
        return max(1, min(AUTO_MAX, usable_cpus(), len(jobs)))
    return min(int(setting), len(jobs))


AUTO_MAX = 4


def job_model(overrides: Sequence[str], master_model: str | None) -> str | None:
    """The system a job's config names: its last ``model.name=`` override, else its last
    ``model=`` choice, else the sweep's own choice."""
    name = choice = None
    for override in overrides:
        key, _, value = override.partition("=")
        key = key.lstrip("+")
        if key == "model.name":
            name = value
        elif key == "model":
            choice = value
    return name or choice or master_model
