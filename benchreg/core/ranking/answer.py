"""The ranked-list answer: results in rank order, each with an id, a score and metadata.

JSON shape (what a system returns in ``Prediction.answer`` and what a predictions line holds)::

    {"results": [{"score": 1.5, ...item fields...}, ...], "latency_s": 0.01}

A bare list of items is accepted as ``{"results": [...]}``. Item fields other than ``score`` are
the item metadata, defined by the family (retrieval: ``source_id``, ``region``,
``observed_at``, ``holder``, ``atom_id``); :func:`parse_ranked_list` checks only what every
ranked list needs, without copying the items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class RankedList:
    """A checked ranked list: the result objects as given (not copied), in rank order."""

    results: Sequence[Mapping[str, Any]]
    latency_s: float | None = None

    def scores(self) -> list[float | None]:
        return [item.get("score") for item in self.results]

    def to_json(self) -> dict[str, Any]:
        return {"results": list(self.results), "latency_s": self.latency_s}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def parse_ranked_list(answer: Any) -> tuple[RankedList | None, str | None]:
    """``(ranked list, None)`` or ``(None, why it is not one)``. Every result must be an object
    whose ``score``, when given, is a finite number or null."""
    ranked, problem = parse_ranked_container(answer)
    if ranked is None:
        return None, problem
    if problem := ranked_items_problem(ranked.results):
        return None, problem
    return ranked, None


def parse_ranked_container(answer: Any) -> tuple[RankedList | None, str | None]:
    """Like :func:`parse_ranked_list` without looking at the items (a caller that checks them
    itself in one pass must still apply :func:`ranked_items_problem` to them)."""
    if isinstance(answer, list | tuple):
        answer = {"results": answer}
    if not isinstance(answer, Mapping):
        return None, f"a ranked list must be an object with `results`, got {type(answer).__name__}"
    results = answer.get("results")
    if not isinstance(results, list | tuple):
        return None, "`results` must be a list"
    latency = answer.get("latency_s")
    if latency is not None and not (_number(latency) and latency >= 0):
        return None, f"`latency_s` must be a non-negative number or null, got {latency!r}"
    return RankedList(results, float(latency) if latency is not None else None), None


def ranked_items_problem(results: Sequence[Any]) -> str | None:
    """Why the items are not ranked-list results (first offending rank), or None."""
    for rank, item in enumerate(results, start=1):
        if type(item) is not dict and not isinstance(item, Mapping):
            return f"result {rank} is not an object"
        score = item.get("score")
        if score is not None and type(score) is not float and not _number(score):
            return f"result {rank}: `score` must be a finite number or null, got {score!r}"
        if type(score) is float and not math.isfinite(score):
            return f"result {rank}: `score` must be a finite number or null, got {score!r}"
    return None
