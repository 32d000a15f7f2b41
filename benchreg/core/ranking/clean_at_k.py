"""`clean_at_k`: share of queries whose top k holds no result carrying a flag.

The resolver marks results with named flags (retrieval: ``future`` = observed after the
query's ``as_of``; ``foreign_holder`` = from another holder's memory), as true or unknown. For
the queries with a non-null ``sample.meta[when]``::

    clean = 1  if no r_i with i <= k has the flag true, else 0

averaged over those queries; an unknown flag is not a violation but is counted apart
(``unknown`` in the detail: queries with an unknown flag in the top k). A query without a
scored answer counts 0. Name the output with the task's ``label`` (e.g. temporal_correctness).
"""

from __future__ import annotations

from collections.abc import Sequence

from benchreg.core import registry
from benchreg.core.ranking.base import RankingMetric
from benchreg.core.ranking.resolution import ResolvedRanking
from benchreg.core.types import Sample


def is_clean(resolved: ResolvedRanking, flag: str, k: int | None) -> bool:
    return not resolved.flagged_within(flag, k)


@registry.metrics.register("clean_at_k")
class CleanAtK(RankingMetric):
    extra_columns = ("unknown",)

    def __init__(
        self, flag: str, when: str, k: int | None = 10, gate: str | None = None
    ) -> None:
        super().__init__(gate)
        self.flag, self.when = flag, when
        self.k = int(k) if k is not None else None

    @property
    def names(self) -> tuple[str, ...]:
        return (f"clean_{self.flag}@{self.k}" if self.k else f"clean_{self.flag}",)

    def applies(self, sample: Sample) -> bool:
        return sample.meta.get(self.when) is not None

    def value(self, sample: Sample, resolved: ResolvedRanking) -> float:
        return float(is_clean(resolved, self.flag, self.k))

    def extras(self, sample: Sample, resolved: ResolvedRanking | None) -> Sequence[float]:
        return (float(resolved is not None and resolved.unknown_within(self.flag, self.k)),)
