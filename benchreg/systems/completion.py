"""What one request ended with: an answer (possibly from the cache) or a failure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# fields a cached answer keeps beside its text (older entries lack them: read as absent)
_OPTIONAL = (
    "reasoning",
    "served_model",
    "system_fingerprint",
    "option_probs",
    "option_mass",
    "server_timings",
)


@dataclass(slots=True)
class Completion:
    """A successful answer; ``as_cached()`` is what the response cache stores.

    ``latency_s`` is the time of the attempt that succeeded (from the request being sent to its
    answer read), never the wait for a concurrency slot or a rate-limit pause before it;
    ``queue_s`` is that wait (set by the system, not cached: it says how busy this run was, not
    how fast the server is)."""

    text: str
    finish_reason: str | None
    usage: dict[str, int]
    latency_s: float
    attempts: int = 1
    reasoning: str | None = None  # the server's `reasoning_content` (or `reasoning`)
    served_model: str | None = None  # the `model` the server says answered
    system_fingerprint: str | None = None
    option_probs: list[float] | None = None  # scoring=logprobs: P(option i), summing to 1
    option_mass: float | None = None  # the probability the options got before normalising
    server_timings: dict[str, Any] | None = None  # llama-server's `timings`, when sent
    logprobs: list[dict[str, float]] | None = field(default=None, repr=False)  # not cached
    queue_s: float = 0.0

    def as_cached(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "usage": self.usage,
            "latency_s": self.latency_s,
        }
        for key in _OPTIONAL:
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_cached(cls, data: Mapping[str, Any]) -> Completion:
        return cls(
            text=str(data["text"]),
            finish_reason=data.get("finish_reason"),
            usage=dict(data.get("usage") or {}),
            latency_s=float(data.get("latency_s") or 0.0),
            attempts=0,
            **{key: data.get(key) for key in _OPTIONAL},
        )


@dataclass(slots=True)
class Failure:
    """A request that failed for good (not retryable, or out of retries)."""

    reason: str
    attempts: int
    latency_s: float
    queue_s: float = 0.0
