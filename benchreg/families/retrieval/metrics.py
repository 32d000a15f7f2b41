"""Retrieval counts. The metrics are the core's ranking metrics (benchreg.core.ranking), named
in tasks/_base/retrieval.yaml with their gates; the resolver (resolver.py) feeds them."""

from __future__ import annotations

from collections.abc import Sequence

from benchreg.core import registry
from benchreg.core.ranking.resolution import resolved_of
from benchreg.core.types import Prediction, Sample


@registry.counts.register("retrieval")
def retrieval_counts(
    samples: Sequence[Sample], predictions: Sequence[Prediction]
) -> dict[str, int]:
    return {
        "entries": len(samples),
        "answerable": sum(1 for s in samples if s.gold),
        "unanswerable": sum(1 for s in samples if not s.gold),
        "with_as_of": sum(1 for s in samples if s.meta.get("as_of") is not None),
        "with_holder": sum(1 for s in samples if s.meta.get("holder") is not None),
        "resolved": sum(1 for p in predictions if resolved_of(p) is not None),
        "results": sum(
            r.n_results for p in predictions if (r := resolved_of(p)) is not None
        ),
    }
