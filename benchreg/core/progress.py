"""Progress of long steps: a live bar on a terminal (tqdm), periodic plain lines otherwise.

Short work stays silent: the bar appears only after ``delay_s`` seconds, and the plain lines come
every ``every_s`` seconds (a log file or CI output is not flooded).
"""

from __future__ import annotations

import sys
import time
from typing import Any

from loguru import logger

EVERY_S = 5.0
DELAY_S = 1.0


class Progress:
    """``advance(k)`` after each piece of work; ``finish()`` once at the end."""

    def __init__(
        self,
        label: str,
        total: int,
        *,
        enabled: bool = True,
        every_s: float = EVERY_S,
        terminal: bool | None = None,
    ):
        self.label = label
        self.total = total
        self.enabled = enabled
        self.every_s = every_s
        self.done = 0
        self._start = self._last = time.perf_counter()
        on_terminal = sys.stderr.isatty() if terminal is None else terminal
        self._bar: Any = None
        if enabled and on_terminal:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total, desc=label, unit="it", delay=DELAY_S, leave=False, file=sys.stderr
            )

    def advance(self, k: int = 1) -> None:
        self.done += k
        if self._bar is not None:
            self._bar.update(k)
            return
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
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self.enabled and elapsed >= self.every_s:
            logger.info(f"{self.label}: {self.done}/{self.total} done in {elapsed:.1f} s")
