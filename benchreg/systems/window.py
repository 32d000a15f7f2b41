"""How many requests a model server gets at once, and when one of them is given up.

:class:`AdaptiveWindow`: at most ``limit`` attempts in flight, ``limit`` between 1 and
`model.concurrency`. When the server pushes back (HTTP 429, 502, 503, 504, or an attempt that
timed out) the limit is halved, at most once per round of requests (a burst of refusals to
requests sent before the cut counts once); each answer then adds ``1 / limit`` to it, so it
climbs back by about one per window of answers (additive increase, multiplicative decrease,
as TCP does). The first cut is said on the terminal; every cut is in the stats.

:class:`Watchdog`: an attempt is given up only when the server shows no sign of life for
`model.timeout_s`. Before its answer starts, an attempt waits as long as the server keeps
sending anything (another answer, a streamed token): a request queued inside a busy server is
slow, not lost, and sending it again would make the server do the work twice. Once its own
answer has started (a first byte of the body), an attempt must keep receiving bytes: a streamed
answer sends as it generates. One task checks every watched attempt a few times per timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from typing import Any

from loguru import logger

PUSHBACK_STATUSES = frozenset({429, 502, 503, 504})
CHECKS_PER_TIMEOUT = 4
MAX_CHECK_S = 1.0


class AdaptiveWindow:
    """``started = await window.acquire()`` before an attempt, ``window.release(started, ...)``
    after it, whatever happened."""

    def __init__(self, ceiling: int, what: str = "the server") -> None:
        self.ceiling = ceiling
        self.what = what
        self.limit = float(ceiling)
        self.in_flight = 0
        self.lowest = ceiling
        self.cuts = 0
        self.pushbacks: Counter[str] = Counter()
        self._cut_at = -1.0  # when the limit was last cut (time.monotonic)
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def allowed(self) -> int:
        return max(1, int(self.limit))

    async def acquire(self) -> float:
        """Wait for a place in the window; when the attempt started (for :meth:`release`)."""
        if self.in_flight < self.allowed and not self._waiters:
            self.in_flight += 1
            return time.monotonic()
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._free()  # granted just before the cancel: hand the place on
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise
        return time.monotonic()

    def release(self, started: float, *, ok: bool = False, pushback: str | None = None) -> None:
        """The attempt that ``acquire`` let start at ``started`` is over: answered (``ok``),
        refused or timed out as a busy server does (``pushback``: its cause), or neither."""
        if ok:
            self.limit = min(float(self.ceiling), self.limit + 1.0 / self.limit)
        elif pushback is not None:
            self._pushed_back(started, pushback)
        self._free()

    def as_dict(self) -> dict[str, Any]:
        return {
            "configured": self.ceiling,
            "lowest": self.lowest,
            "final": self.allowed,
            "cuts": self.cuts,
            "pushbacks": dict(sorted(self.pushbacks.items())),
            "rule": "halved when the server pushes back (HTTP 429/502/503/504, timeouts), at "
            "most once per round; +1/limit per answer, up to model.concurrency",
        }

    def _pushed_back(self, started: float, cause: str) -> None:
        self.pushbacks[cause] += 1
        if started < self._cut_at or self.limit <= 1.0:
            return  # sent before the last cut: that cut answered it already
        before = self.allowed
        self.limit = max(1.0, self.limit / 2.0)
        self._cut_at = time.monotonic()
        self.cuts += 1
        self.lowest = min(self.lowest, self.allowed)
        if self.cuts == 1:
            logger.warning(
                f"the server at {self.what} pushes back ({cause}): requests in flight lowered "
                f"from {before} to {self.allowed} (of model.concurrency={self.ceiling}); they rise "
                "again as answers come (metrics.json: system.stats.concurrency)"
            )
        else:
            logger.debug(f"pushed back ({cause}): {self.allowed} requests in flight")

    def _free(self) -> None:
        self.in_flight -= 1
        while self._waiters and self.in_flight < self.allowed:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)


class Watch:
    """One attempt under the watchdog: when it was sent and when its answer last sent a byte."""

    __slots__ = ("deadline", "last", "sent")

    def __init__(self, deadline: asyncio.Timeout, now: float) -> None:
        self.deadline = deadline
        self.sent = now
        self.last: float | None = None  # None: its answer has not started


class Watchdog:
    """``watch = dog.watch(deadline)`` inside ``async with asyncio.timeout(None) as deadline``,
    ``dog.heard(watch)`` on each byte of the answer, ``dog.heard()`` on anything else from the
    server (response headers), ``dog.done(watch)`` at the end; a stalled attempt's ``deadline``
    fires (``deadline.expired()`` then tells it from any other TimeoutError)."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.period = min(MAX_CHECK_S, timeout_s / CHECKS_PER_TIMEOUT)
        self.last_heard = time.monotonic()  # the last sign of life from the server
        self._watches: set[Watch] = set()
        self._task: asyncio.Task[None] | None = None

    def watch(self, deadline: asyncio.Timeout) -> Watch:
        watch = Watch(deadline, time.monotonic())
        self._watches.add(watch)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        return watch

    def heard(self, watch: Watch | None = None) -> None:
        now = time.monotonic()
        self.last_heard = now
        if watch is not None:
            watch.last = now

    def done(self, watch: Watch) -> None:
        self._watches.discard(watch)

    def stalled(self, watch: Watch, now: float) -> bool:
        """No byte of its answer for timeout_s once it started; before that, nothing at all
        from the server (on any attempt) for timeout_s since it was sent."""
        since = watch.last if watch.last is not None else max(watch.sent, self.last_heard)
        return now - since > self.timeout_s

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self) -> None:
        try:
            while self._watches:
                await asyncio.sleep(self.period)
                now = time.monotonic()
                for watch in [w for w in self._watches if self.stalled(w, now)]:
                    self._watches.discard(watch)
                    watch.deadline.reschedule(0)  # fires now: the attempt sees TimeoutError
        finally:
            self._task = None
