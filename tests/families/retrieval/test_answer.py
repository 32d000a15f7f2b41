"""The answer schema `retrieval_results`: a ranked list whose results carry a source, a region
of the sample's modality, and optional time, holder and atom id; the first offending rank is
named."""

from __future__ import annotations

import math
from typing import Any

import pytest

from benchreg.core import registry
from benchreg.core.types import Sample, Status
from benchreg.families.retrieval.answer import RetrievalAnswer, result_problem

CHECK = RetrievalAnswer()


def sample(modality: str) -> Sample:
    return Sample("q", {}, [], {"modality": modality})


def item(**changes: Any) -> dict[str, Any]:
    return {"source_id": "s", "region": {"page": 1}, "score": 1.5, **changes}


def test_registered() -> None:
    assert isinstance(registry.answer_schemas.get("retrieval_results"), RetrievalAnswer)


def test_a_valid_list_is_ok_and_normalised() -> None:
    results = [item(), item(region={"page_start": 2, "page_end": 4}, score=None,
                            observed_at="2024-01-10T09:00:00Z", holder="alice", atom_id="s#1")]
    checked = CHECK.check({"results": results, "latency_s": 2}, sample("pdf"))
    assert checked.status is Status.OK and checked.detail is None
    assert checked.answer == {"results": results, "latency_s": 2.0}


def test_a_bare_list_is_a_ranked_list() -> None:
    checked = CHECK.check([item()], sample("pdf"))
    assert checked.status is Status.OK
    assert checked.answer == {"results": [item()], "latency_s": None}


def test_an_empty_list_is_ok() -> None:
    assert CHECK.check({"results": []}, sample("video")).status is Status.OK


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        ("page 3", "a ranked list must be an object with `results`, got str"),
        ({"hits": []}, "`results` must be a list"),
        ({"results": [], "latency_s": -1}, "`latency_s` must be a non-negative number or null, "
                                           "got -1"),
        ([item(), "s2"], "result 2 is not an object"),
        ([item(score=math.nan)], "result 1: `score` must be a finite number or null, got nan"),
        ([item(score="high")], "result 1: `score` must be a finite number or null, got 'high'"),
        ([item(), item(source_id="")], "result 2: `source_id` must be a non-empty string"),
        ([item(source_id=7)], "result 1: `source_id` must be a non-empty string"),
        ([item(region={"turn": 1})], "result 1: pdf region must be {page} or {block, page} or "
                                     "{page_end, page_start}, got {turn}"),
        ([item(region={"page": 0})], "result 1: page must be an integer >= 1, got 0"),
        ([item(observed_at="2024-01-10")],
         "result 1: observed_at: time '2024-01-10' has no UTC offset (write e.g. +00:00)"),
        ([item(holder=3)], "result 1: `holder` must be a string or null"),
        ([item(atom_id=["a"])], "result 1: `atom_id` must be a string or null"),
    ],
)
def test_invalid_answers_name_the_first_problem(answer: Any, detail: str) -> None:
    checked = CHECK.check(answer, sample("pdf"))
    assert (checked.status, checked.detail) == (Status.INVALID, detail)
    assert checked.answer == answer


@pytest.mark.parametrize(
    ("modality", "region"),
    [
        ("conversation", {"turn": 2}),
        ("conversation", {"turn_start": 0, "turn_end": 3}),
        ("image", {}),
        ("ui_screenshot", {"bbox": [0, 0, 10, 10]}),  # ints: not the fast shape, still valid
        ("video", {"t_start": 1, "t_end": 2}),
        ("code", {"path": "a.py", "line_start": 1, "line_end": 4}),
        ("code", {"path": "a.py", "symbol": "Session.request"}),
    ],
)
def test_valid_regions_of_each_modality(modality: str, region: dict[str, Any]) -> None:
    assert CHECK.check([item(region=region)], sample(modality)).status is Status.OK
    assert result_problem(modality, item(region=region)) is None


def test_the_region_is_checked_against_the_sample_modality() -> None:
    checked = CHECK.check([item(region={"turn": 2})], sample("video"))
    assert checked.detail == "result 1: video region must be {t_end, t_start}, got {turn}"


def test_result_problem_checks_in_order() -> None:
    bad = {"source_id": "", "region": None, "observed_at": "x", "holder": 1}
    assert result_problem("pdf", bad) == "`source_id` must be a non-empty string"
    bad["source_id"] = "s"
    assert result_problem("pdf", bad) == "region must be an object, got NoneType"
    bad["region"] = {"page": 1}
    assert result_problem("pdf", bad) == "observed_at: not an ISO 8601 time: 'x'"
    bad["observed_at"] = None
    assert result_problem("pdf", bad) == "`holder` must be a string or null"
