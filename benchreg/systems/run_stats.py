"""Counters a model system reports in metrics.json (`system.stats`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(slots=True)
class RunStats:
    samples: int = 0  # predictions returned
    asked: int = 0  # samples sent to the server (not answered from the cache)
    cache_hits: int = 0
    errors: int = 0  # samples whose request failed for good
    prompt_tokens: int = 0  # of answers received in this run
    completion_tokens: int = 0
    latencies: list[float] = field(default_factory=list)  # of answers received in this run

    def add_usage(self, usage: dict[str, int], latency_s: float) -> None:
        self.prompt_tokens += int(usage.get("prompt_tokens", 0))
        self.completion_tokens += int(usage.get("completion_tokens", 0))
        self.latencies.append(latency_s)

    def as_dict(self, *, requests: int, retries: int) -> dict[str, Any]:
        p50, p95 = (
            (float(np.percentile(self.latencies, q)) for q in (50, 95))
            if self.latencies
            else (None, None)
        )
        return {
            "samples": self.samples,
            "requests": requests,  # HTTP requests made, retries included
            "asked": self.asked,
            "cache_hits": self.cache_hits,
            "retries": retries,
            "errors": self.errors,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_p50_s": None if p50 is None else round(p50, 4),
            "latency_p95_s": None if p95 is None else round(p95, 4),
        }
