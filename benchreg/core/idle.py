"""Work a process may do while it would otherwise wait for its forked copies.

A step that knows what comes next offers it (:func:`offered`), e.g. a run offers the decoding of
its predictions file while its data loads; a loader that has started copies to decode its files
runs what is offered (:func:`run_offered`) before it waits for them, on the core it would leave
idle. Offered work only fills a cache: it is never required, its errors are left for the step
that needs its result to report, and what was not run when its block ends is dropped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from loguru import logger

_offered: list[Callable[[], object]] = []


@contextlib.contextmanager
def offered(work: Callable[[], object] | None) -> Iterator[None]:
    """``work`` may be run within this block by :func:`run_offered` (None: nothing offered)."""
    if work is None:
        yield
        return
    _offered.append(work)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # run (and removed) already
            _offered.remove(work)


def has_offered() -> bool:
    """Whether some work is offered now (a step may start copies only when it is)."""
    return bool(_offered)


def run_offered() -> None:
    """Run the offered work, oldest first; an error in it is the needing step's to report."""
    while _offered:
        work = _offered.pop(0)
        try:
            work()
        except Exception as exc:
            logger.debug(f"work done while waiting failed ({type(exc).__name__}); left for later")
