"""Progress of long steps: a plain log line every few seconds, silent for short work."""

from __future__ import annotations

import time

from loguru import logger

EVERY_S = 5.0


class Progress:
    """``advance(k)`` after each piece of work; logs done/total, rate and ETA every ``every_s``."""

    def __init__(self, label: str, total: int, *, enabled: bool = True, every_s: float = EVERY_S):
        self.label = label
        self.total = total
        self.enabled = enabled
        self.every_s = every_s
        self.done = 0
        self._start = self._last = time.perf_counter()

    def advance(self, k: int = 1) -> None:
        self.done += k
        now = time.perf_counter()
        if not self.enabled or now - self._last < self.every_s:
            return
        self._last = now
        rate = self.done / (now - self._start)
        eta = (self.total - self.done) / rate if rate > 0 else float("inf")
        logger.info(
            f"{self.label}: {self.done}/{self.total} ({rate:.1f}/s, about {eta:.0f} s left)"
        )

    def finish(self) -> None:
        elapsed = time.perf_counter() - self._start
        if self.enabled and elapsed >= self.every_s:
            logger.info(f"{self.label}: {self.done}/{self.total} done in {elapsed:.1f} s")
