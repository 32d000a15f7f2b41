"""The answer check's column-wise fast path never changes a verdict: on random result lists,
mutated in the ways a run can be wrong, `RetrievalAnswer.check` agrees with the item-by-item
rules (`ranked_items_problem`, then `result_problem`), message included."""

from __future__ import annotations

import copy
import math
import random
from typing import Any

import pytest

from benchreg.core.ranking.answer import ranked_items_problem
from benchreg.core.types import Sample, Status
from benchreg.families.retrieval.answer import RetrievalAnswer, result_problem

GOOD: dict[str, list[dict[str, Any]]] = {
    "conversation": [{"turn": 3}, {"turn_start": 1, "turn_end": 4}],
    "pdf": [{"page": 2}, {"page": 2, "block": 0}, {"page_start": 1, "page_end": 3}],
    "image": [{}],
    "ui_screenshot": [{"bbox": [0.1, 0.2, 0.3, 0.4]}, {"bbox": [0, 0, 10, 20]}],
    "video": [{"t_start": 0.0, "t_end": 2.5}, {"t_start": 1, "t_end": 2}],
    "code": [{"path": "a.py", "symbol": "f"}, {"path": "a.py", "line": 3},
             {"path": "a.py", "line_start": 1, "line_end": 9}],
}
BAD_VALUES = [None, True, -1, 0, 1.5, math.nan, math.inf, "", "x", [], {}, [0.1, 0.2, 0.1, 0.4]]


def mutate(item: dict[str, Any], rng: random.Random) -> None:
    key = rng.choice(["score", "source_id", "region", "observed_at", "holder", "atom_id",
                      "region_value", "extra"])
    if key == "region_value" and item["region"]:
        item["region"][rng.choice(sorted(item["region"]))] = rng.choice(BAD_VALUES)
    elif key == "observed_at":
        item[key] = rng.choice(["2024-01-01T00:00:00+00:00", "2024-01-01", 5, None])
    elif key == "extra":
        item["note"] = rng.choice(BAD_VALUES)
    elif rng.random() < 0.2:
        item.pop(key, None)
    else:
        item[key] = rng.choice(BAD_VALUES)


def slow_verdict(modality: str, results: list[Any]) -> str | None:
    if problem := ranked_items_problem(results):
        return problem
    for rank, item in enumerate(results, start=1):
        if problem := result_problem(modality, item):
            return f"result {rank}: {problem}"
    return None


@pytest.mark.parametrize("modality", sorted(GOOD))
def test_fast_path_agrees_with_the_item_rules(modality: str) -> None:
    rng = random.Random(modality)
    sample = Sample("q", {}, [], {"modality": modality})
    for _ in range(400):
        results: list[Any] = [
            {"source_id": f"s{rng.randint(0, 3)}", "region": copy.deepcopy(
                rng.choice(GOOD[modality])), "score": rng.choice([rng.random(), None, 1])}
            for _ in range(rng.randint(0, 6))]
        for item in results:
            if rng.random() < 0.1:
                mutate(item, rng)
        if results and rng.random() < 0.05:
            results[rng.randrange(len(results))] = rng.choice([None, "x", 3])
        checked = RetrievalAnswer().check({"results": results}, sample)
        expected = slow_verdict(modality, results)
        assert (checked.status is Status.INVALID) == (expected is not None), (results, expected)
        assert checked.detail == expected, results
