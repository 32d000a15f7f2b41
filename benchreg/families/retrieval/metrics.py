"""Retrieval counts. The metrics are the core's ranking metrics (benchreg.core.ranking), named
in tasks/_base/retrieval.yaml with their gates; the resolver (resolver.py) feeds them.

Counts: entries, answerable, unanswerable, with_as_of, with_holder, scoped (entries about one
item: `scope.session`), demonstration_entries (gold written by this project), resolved
(scored answers), results, out_of_scope_results and contradicting_results (results whose
claimed time or holder contradicts the corpus)."""

from __future__ import annotations

from collections.abc import Sequence

from benchreg.core import registry
from benchreg.core.ranking.resolution import resolved_of
from benchreg.core.types import Prediction, Sample
from benchreg.families.retrieval.resolver import CONTRADICTS, OUT_OF_SCOPE


@registry.counts.register("retrieval")
def retrieval_counts(
    samples: Sequence[Sample], predictions: Sequence[Prediction]
) -> dict[str, int]:
    resolved = [r for p in predictions if (r := resolved_of(p)) is not None]
    return {
        "entries": len(samples),
        "answerable": sum(1 for s in samples if s.gold),
        "unanswerable": sum(1 for s in samples if not s.gold),
        "with_as_of": sum(1 for s in samples if s.meta.get("as_of") is not None),
        "with_holder": sum(1 for s in samples if s.meta.get("holder") is not None),
        "scoped": sum(1 for s in samples if s.meta.get("session") is not None),
        "demonstration_entries": sum(1 for s in samples if s.meta.get("demonstration")),
        "resolved": len(resolved),
        "results": sum(r.n_results for r in resolved),
        "out_of_scope_results": sum(len(r.flagged.get(OUT_OF_SCOPE, ())) for r in resolved),
        "contradicting_results": sum(len(r.flagged.get(CONTRADICTS, ())) for r in resolved),
    }
