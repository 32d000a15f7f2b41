"""Chunks of numpy work on two threads, their results in order."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

THREADS = 2  # more gained nothing on the numpy work this serves


def ordered_map(fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
    """``map(fn, items)`` with up to :data:`THREADS` calls running at once in threads, for work
    that releases the GIL (numpy's array operations), results in input order and at most
    :data:`THREADS` of them pending (memory stays a few chunks). ``items`` is read in the
    calling thread. One CPU: a plain ``map``."""
    threads = min(THREADS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    if threads <= 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(threads, thread_name_prefix="benchreg-map") as pool:
        pending: deque[Future[R]] = deque()
        try:
            for item in items:
                pending.append(pool.submit(fn, item))
                if len(pending) > threads:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
