"""A line while a server keeps a run waiting: a hung server (connections accepted, nothing
answered) is seen within a minute with the default timeouts, not after model.timeout_s times
the retries.

A progress line comes only when answers come; :class:`ServerWait` says so every
:data:`EVERY_S` seconds in which no answer arrived, until the requests end (it stops with them)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from types import TracebackType

from loguru import logger

EVERY_S = 30.0  # a line for each such stretch without an answer


class ServerWait:
    """``async with ServerWait(...)`` around the requests of a run: a warning for each
    ``every_s`` seconds without a new answer, naming how many are answered and what ends the
    wait (``hint``: the timeout and retry options)."""

    def __init__(
        self,
        endpoint: str,
        total: int,
        answered: Callable[[], int],
        hint: str,
        every_s: float | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.total = total
        self.answered = answered
        self.hint = hint
        self.every_s = EVERY_S if every_s is None else every_s
        self.lines = 0  # warnings given
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> ServerWait:
        self._task = asyncio.get_running_loop().create_task(self._watch())
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _watch(self) -> None:
        """Ends when the requests end (cancelled by ``__aexit__``): one wake-up per
        ``every_s``."""
        start = time.monotonic()
        count = self.answered()
        while count < self.total:
            await asyncio.sleep(self.every_s)
            now_count = self.answered()
            if now_count != count:
                count = now_count
                continue
            self.lines += 1
            logger.warning(
                f"waiting for the server at {self.endpoint}: {count} of {self.total} answered "
                f"after {time.monotonic() - start:.0f} s, none in the last {self.every_s:.0f} s "
                f"({self.hint})"
            )
