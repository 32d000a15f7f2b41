"""When to retry a chat request, and how long to wait first."""

from __future__ import annotations

import random
import time
from email.utils import parsedate_to_datetime

from benchreg.systems.chat_config import Backoff

RETRY_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))


class AttemptFailed(Exception):
    """One attempt failed; ``retryable`` says whether another attempt may succeed, and
    ``pushback`` (e.g. ``HTTP 429``, ``timeout``) whether it is a busy server pushing back, to
    which fewer requests in flight are the answer (:mod:`benchreg.systems.window`)."""

    def __init__(
        self,
        reason: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        pushback: str | None = None,
    ):
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after
        self.pushback = pushback


def retryable_status(status: int) -> bool:
    return status in RETRY_STATUSES


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def delay_before_retry(
    backoff: Backoff, retry: int, retry_after: float | None, rng: random.Random
) -> float:
    """Exponential backoff with jitter; a server's Retry-After wins (up to a cap)."""
    if retry_after is not None:
        # a little jitter on top, so clients told the same instant do not return together
        return min(backoff.max_retry_after_s, retry_after) * rng.uniform(1.0, 1.1)
    ceiling = min(backoff.max_s, backoff.initial_s * backoff.multiplier**retry)
    return ceiling * rng.uniform(0.5, 1.0)
