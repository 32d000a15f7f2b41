"""Pacing requests (a rate limit) and giving up on a run whose requests mostly fail."""

from __future__ import annotations

import asyncio
import time

from benchreg.core.errors import BenchregError
from benchreg.systems.chat_config import StopEarly


class RateLimiter:
    """At most ``rate`` request starts per second, evenly spaced (None: no limit)."""

    def __init__(self, rate: float | None) -> None:
        self._interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self._interval:
            return
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self._interval
        if start > now:
            await asyncio.sleep(start - now)


class FailureGuard:
    """Counts finished requests; :meth:`check` raises once all of the first
    ``rule.initial_requests`` failed (a server that is gone, a wrong key: a few seconds, not 20
    requests' retries), or once more than ``rule.max_error_rate`` of at least
    ``rule.min_requests`` failed."""

    def __init__(self, rule: StopEarly, what: str, *, cached: bool = False) -> None:
        self.rule = rule
        self.what = what
        self.cached = cached  # whether answers received so far are in the response cache
        self.finished = 0
        self.failed = 0
        self.last_reason = ""

    def record(self, ok: bool, reason: str = "") -> None:
        if self.tripped:  # frozen: the message names the counts that tripped it
            return
        self.finished += 1
        if not ok:
            self.failed += 1
            self.last_reason = reason

    @property
    def tripped(self) -> bool:
        first = self.rule.initial_requests
        if first and self.finished >= first and self.failed == self.finished:
            return True
        return (
            self.finished >= self.rule.min_requests
            and self.failed > self.rule.max_error_rate * self.finished
        )

    def check(self) -> None:
        if self.tripped:
            raise BenchregError(
                f"stopped early: {self.failed} of {self.finished} requests to {self.what} "
                f"failed (last: {self.last_reason})",
                fix="check that the server is up and model.base_url, model.model and "
                "model.api_key_env are right"
                + ("; answers received so far are cached" if self.cached else ""),
            )
