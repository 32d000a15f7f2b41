"""An ordered map over a few threads, for numpy work that releases the GIL.

numpy's random draws, ``bincount`` and matrix products run without the GIL, so chunks of such
work overlap on a machine with more than one CPU while their results stay in input order.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

MAX_THREADS = 2  # the bootstrap's counts and products: more threads than this gained nothing


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity on Linux)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


def ordered_map(
    fn: Callable[[T], R], items: Iterable[T], *, threads: int | None = None, ahead: int = 3
) -> Iterator[R]:
    """``map(fn, items)`` with ``fn`` run in up to ``threads`` threads (default: the usable
    CPUs, at most :data:`MAX_THREADS`) and at most ``ahead`` results pending at once (memory
    stays O(ahead chunks)). ``items`` is consumed in this thread, in order; one thread or one
    CPU is a plain ``map``."""
    count = min(usable_cpus(), MAX_THREADS) if threads is None else threads
    if count <= 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(count, thread_name_prefix="benchreg-map") as pool:
        pending: deque[Future[R]] = deque()
        try:
            for item in items:
                pending.append(pool.submit(fn, item))
                if len(pending) >= ahead:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
