"""Counters a model system reports in metrics.json (`system.stats`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class RunStats:
    samples: int = 0  # predictions returned
    asked: int = 0  # samples sent to the server (not answered from the cache)
    cache_hits: int = 0
    errors: int = 0  # samples whose request failed for good
    prompt_tokens: int = 0  # of answers received in this run
    completion_tokens: int = 0
    reasoning_tokens: int = 0  # where the server counts them (completion_tokens_details)
    usage_estimated: int = 0  # answers whose usage benchreg estimated for a budget (not counted)
    latencies: list[float] = field(default_factory=list)  # of answers received in this run
    queued: list[float] = field(default_factory=list)  # waits for a concurrency slot

    def add_usage(self, usage: dict[str, int], latency_s: float, queue_s: float = 0.0) -> None:
        self.latencies.append(latency_s)
        self.queued.append(queue_s)
        if usage.get("estimated"):  # the token counts are the server's own only
            self.usage_estimated += 1
            return
        self.prompt_tokens += int(usage.get("prompt_tokens", 0))
        self.completion_tokens += int(usage.get("completion_tokens", 0))
        self.reasoning_tokens += int(usage.get("reasoning_tokens", 0))

    def as_dict(self, *, requests: int, retries: int) -> dict[str, Any]:
        p50, p95 = _quantiles(self.latencies)
        q50, q95 = _quantiles(self.queued)
        return {
            "samples": self.samples,
            "requests": requests,  # HTTP requests made, retries included
            "asked": self.asked,
            "cache_hits": self.cache_hits,
            "retries": retries,
            "errors": self.errors,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "usage_estimated": self.usage_estimated,
            # latency: the request that succeeded, from sending it to its answer read; the wait
            # for a concurrency slot before it is the queue time, apart
            "latency_p50_s": p50,
            "latency_p95_s": p95,
            "queue_p50_s": q50,
            "queue_p95_s": q95,
            "latency_means": "request time of the answer's successful attempt, without the "
            "wait for a concurrency slot (queue_*) or rate-limit and retry pauses",
        }


def _quantiles(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    ordered = sorted(values)
    p50, p95 = (round(_percentile(ordered, q), 4) for q in (0.50, 0.95))
    return p50, p95


def _percentile(ordered: list[float], q: float) -> float:
    """numpy.percentile's default (linear between the closest ranks), without numpy: its
    percentile imported numpy.ma on first use, 20 ms at the end of every model run."""
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (position - low))
