"""The retrieval answer `retrieval_results`: a ranked list (benchreg.core.ranking) whose results
carry `source_id`, a `region` of the sample's modality (ranges allowed), and optional
`observed_at` (ISO time with offset), `holder` and `atom_id`.

A list that breaks this is `invalid` as a whole, with the first offending rank in the detail.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any

from benchreg.core import registry
from benchreg.core.ranking.answer import parse_ranked_container, ranked_items_problem
from benchreg.core.types import Checked, Sample, Status
from benchreg.families.retrieval.columns import columns_of
from benchreg.families.retrieval.regions import COMMON, common_region, region_problem
from benchreg.families.retrieval.times import time_problem


def result_problem(modality: str, item: Mapping[str, Any]) -> str | None:
    source = item.get("source_id")
    if type(source) is not str or not source:
        return "`source_id` must be a non-empty string"
    region = item.get("region")
    if not common_region(modality, region) and (
        problem := region_problem(modality, region, gold=False)
    ):
        return problem
    observed = item.get("observed_at")
    if observed is not None and (problem := time_problem(observed)):
        return f"observed_at: {problem}"
    for key in ("holder", "atom_id"):
        if item.get(key) is not None and not isinstance(item[key], str):
            return f"`{key}` must be a string or null"
    return None


STR_OR_NULL = frozenset({str, type(None)})


def all_common(modality: str, results: Sequence[Any]) -> bool:
    """Whether every result is a dict with a non-empty string `source_id`, a common region
    shape of the modality (regions.COMMON), a finite float or null `score`, string or null
    `holder` and `atom_id`, and a valid or null `observed_at`. Checked column by column with
    C-level passes (``map(dict.get, ...)``); False means "look closer", not "invalid"."""
    if not results:
        return True
    if set(map(type, results)) != {dict}:
        return False
    scores = list(map(dict.get, results, repeat("score")))
    if None in scores:
        scores = [s for s in scores if s is not None]
    # a sum is NaN or infinite when a term is (or on overflow, which only sends us the slow way)
    if scores and (set(map(type, scores)) != {float} or not math.isfinite(sum(scores))):
        return False
    sources = list(map(dict.get, results, repeat("source_id")))
    if set(map(type, sources)) != {str} or "" in sources:
        return False
    for key in ("holder", "atom_id"):
        if not set(map(type, map(dict.get, results, repeat(key)))) <= STR_OR_NULL:
            return False
    observed = list(map(dict.get, results, repeat("observed_at")))
    if observed.count(None) != len(observed) and any(
        time_problem(o) for o in observed if o is not None
    ):
        return False
    regions = list(map(dict.get, results, repeat("region")))
    if set(map(type, regions)) != {dict}:
        return False
    unit = SINGLE_UNIT.get(modality)
    if unit is not None and set(map(len, regions)) == {1}:
        # the most common shape, a single turn or page, without a call per item
        key, least = unit
        units = list(map(dict.get, regions, repeat(key)))
        return set(map(type, units)) == {int} and min(units) >= least
    if modality == "conversation":  # {turn} is its only common shape
        return False
    return all(map(COMMON[modality], regions))


SINGLE_UNIT = {"conversation": ("turn", 0), "pdf": ("page", 1)}  # regions.COMMON's one-key shapes


class RetrievalAnswer:
    json_is_answer = False  # the parser reads the `{"results": [...]}` object

    def json_schema(self, sample: Sample) -> dict[str, Any] | None:
        """`{"results": [{"source_id", "region", ...}]}`, the object the prompt asks for; the
        region's shape (which depends on the modality) is left to :meth:`check`."""
        result = {
            "type": "object",
            "properties": {
                "source_id": {"type": "string", "minLength": 1},
                "region": {"type": "object"},
                "score": {"type": "number"},
            },
            "required": ["source_id", "region"],
        }
        return {
            "type": "object",
            "properties": {"results": {"type": "array", "items": result}},
            "required": ["results"],
        }

    def check(self, answer: Any, sample: Sample) -> Checked:
        modality = sample.meta["modality"]
        held = columns_of(answer)
        if held is not None:  # a reader's columns: checked as they were stored
            if held.run.modality == modality:
                latency = answer.get("latency_s")
                ranked, problem = parse_ranked_container({"results": [], "latency_s": latency})
                if ranked is None:
                    return Checked(answer, Status.INVALID, problem)
                return Checked({"results": held, "latency_s": ranked.latency_s})
            answer = {**answer, "results": list(held)}
        ranked, problem = parse_ranked_container(answer)
        if ranked is None:
            return Checked(answer, Status.INVALID, problem)
        if not all_common(modality, ranked.results):
            if problem := ranked_items_problem(ranked.results):
                return Checked(answer, Status.INVALID, problem)
            for rank, item in enumerate(ranked.results, start=1):
                if problem := result_problem(modality, item):
                    return Checked(answer, Status.INVALID, f"result {rank}: {problem}")
        return Checked(ranked.to_json())


registry.answer_schemas.add("retrieval_results", RetrievalAnswer())
