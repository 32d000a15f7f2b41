"""The retrieval answer `retrieval_results`: a ranked list (benchreg.core.ranking) whose results
carry `source_id`, a `region` of the sample's modality (ranges allowed), and optional
`observed_at` (ISO time with offset), `holder` and `atom_id`.

A list that breaks this is `invalid` as a whole, with the first offending rank in the detail.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchreg.core import registry
from benchreg.core.ranking import parse_ranked_list
from benchreg.core.types import Checked, Sample, Status
from benchreg.families.retrieval.regions import common_region, region_problem
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


class RetrievalAnswer:
    def check(self, answer: Any, sample: Sample) -> Checked:
        ranked, problem = parse_ranked_list(answer)
        if ranked is None:
            return Checked(answer, Status.INVALID, problem)
        modality = sample.meta["modality"]
        for rank, item in enumerate(ranked.results, start=1):
            if problem := result_problem(modality, item):
                return Checked(answer, Status.INVALID, f"result {rank}: {problem}")
        return Checked(ranked.to_json())


registry.answer_schemas.add("retrieval_results", RetrievalAnswer())
