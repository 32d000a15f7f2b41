"""What a resolver made of one ranked answer against the sample's gold (``prediction.resolved``).

A family's resolver decides which gold item each result hits (for retrieval: which gold regions
a result's region overlaps) and which results carry a named flag (e.g. ``future``: observed after
the query's time; ``foreign_holder``: from another holder's memory). The ranking metrics read
only this record, so they work for any family. Ranks are 1-based.

The record is compact: per gold item the rank of the first result that hits it (0 = never), and
per flag the ranks where it is true or unknown, so a 100-result list costs a few integers. It
may also carry the extent of the first results (``extents``, in ``extent_unit``: e.g. pages,
turns, seconds, lines; None where the resolver cannot tell), which `context_at_k` averages so
that coarse results are visible beside recall.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchreg.core.types import Prediction, Sample


@dataclass(frozen=True, slots=True)
class ResolvedRanking:
    n_results: int
    first_hit: tuple[int, ...]  # per gold item: rank of the first result hitting it; 0 = never
    flagged: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # flag -> ranks (true)
    unknown: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # flag -> ranks (unknown)
    max_score: float | None = None  # highest non-null score
    n_unscored: int = 0  # results with a null score
    extents: tuple[float | None, ...] = ()  # extent of the first results, in rank order
    extent_unit: str | None = None  # the unit of ``extents`` (pages, turns, seconds, ...)

    @property
    def n_gold(self) -> int:
        return len(self.first_hit)

    def first_relevant_rank(self) -> int:
        """Rank of the first result that hits any gold item; 0 when none does."""
        ranks = [r for r in self.first_hit if r]
        return min(ranks) if ranks else 0

    def flagged_within(self, flag: str, k: int | None) -> bool:
        return any(k is None or r <= k for r in self.flagged.get(flag, ()))

    def unknown_within(self, flag: str, k: int | None) -> bool:
        return any(k is None or r <= k for r in self.unknown.get(flag, ()))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "n_results": self.n_results,
            "first_hit": list(self.first_hit),
            "flagged": {k: list(v) for k, v in self.flagged.items()},
            "unknown": {k: list(v) for k, v in self.unknown.items()},
            "max_score": self.max_score,
            "n_unscored": self.n_unscored,
        }
        if self.extent_unit is not None:
            out["extents"] = list(self.extents)
            out["extent_unit"] = self.extent_unit
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResolvedRanking:
        return cls(
            n_results=int(data["n_results"]),
            first_hit=tuple(int(r) for r in data["first_hit"]),
            flagged={k: tuple(v) for k, v in (data.get("flagged") or {}).items()},
            unknown={k: tuple(v) for k, v in (data.get("unknown") or {}).items()},
            max_score=data.get("max_score"),
            n_unscored=int(data.get("n_unscored", 0)),
            extents=tuple(None if e is None else float(e) for e in data.get("extents") or ()),
            extent_unit=data.get("extent_unit"),
        )


def score_summary(scores: Sequence[float | None]) -> tuple[float | None, int]:
    """(highest non-null score, number of null scores)."""
    if scores and None not in scores:
        total = sum(scores)
        if total == total:  # no NaN among them (inf - inf also lands below, correctly)
            return max(scores), 0
    known = [s for s in scores if s is not None and not math.isnan(s)]
    return (max(known) if known else None), len(scores) - len(known)


def resolved_of(prediction: Prediction) -> ResolvedRanking | None:
    """The prediction's resolution, or None when it was not scored (missing, invalid, error)."""
    resolved = prediction.resolved
    if type(resolved) is ResolvedRanking:
        return resolved
    return resolved if isinstance(resolved, ResolvedRanking) else None


def gold_count(sample: Sample) -> int:
    """Number of gold items of a sample whose gold is a list (0 = unanswerable)."""
    gold = sample.gold
    if type(gold) is list:  # the common case, without the ABC check
        return len(gold)
    return len(gold) if isinstance(gold, Sequence) and not isinstance(gold, str) else 0
