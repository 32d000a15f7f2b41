"""What one chat request ended with: an answer (possibly from the cache) or a failure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Completion:
    """A successful answer; ``as_cached()`` is what the response cache stores."""

    text: str
    finish_reason: str | None
    usage: dict[str, int]
    latency_s: float
    attempts: int = 1

    def as_cached(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "usage": self.usage,
            "latency_s": self.latency_s,
        }

    @classmethod
    def from_cached(cls, data: Mapping[str, Any]) -> Completion:
        return cls(
            text=str(data["text"]),
            finish_reason=data.get("finish_reason"),
            usage=dict(data.get("usage") or {}),
            latency_s=float(data.get("latency_s") or 0.0),
            attempts=0,
        )


@dataclass(slots=True)
class Failure:
    """A request that failed for good (not retryable, or out of retries)."""

    reason: str
    attempts: int
    latency_s: float
