"""ISO 8601 times with a UTC offset (a time without one cannot be compared, so it is rejected)."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache


class BadTime(ValueError):
    pass


@lru_cache(maxsize=65536)
def parse_time(text: str) -> datetime:
    """An aware datetime; raises BadTime for anything else."""
    if not isinstance(text, str):
        raise BadTime(f"a time must be an ISO 8601 string, got {text!r}")
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadTime(f"not an ISO 8601 time: {text!r}") from None
    if value.tzinfo is None or value.utcoffset() is None:
        raise BadTime(f"time {text!r} has no UTC offset (write e.g. +00:00)")
    return value


def time_problem(text: object) -> str | None:
    try:
        parse_time(text)  # type: ignore[arg-type]
    except BadTime as exc:
        return str(exc)
    except TypeError:
        return f"a time must be an ISO 8601 string, got {text!r}"
    return None
