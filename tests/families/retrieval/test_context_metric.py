"""`context_at_k` (the mean extent of the top k), a metric over no entry written as null, and
the demonstration note beside the gates (benchreg.core.ranking, benchreg.core.metric)."""

from __future__ import annotations

import numpy as np
import pytest

from benchreg.core.metric import MetricValue
from benchreg.core.ranking.base import DEMONSTRATION
from benchreg.core.ranking.context_at_k import ContextAtK
from benchreg.core.ranking.recall_at_k import RecallAtK
from benchreg.core.ranking.resolution import ResolvedRanking
from benchreg.core.types import Prediction, Sample, Status


def pred(resolved: ResolvedRanking | None) -> Prediction:
    p = Prediction("q", answer={})
    if resolved is None:
        p.status = Status.MISSING
    p.resolved = resolved
    return p


def value(metric, samples, preds) -> float:  # type: ignore[no-untyped-def]
    stats = metric.stats(samples, preds)
    return float(metric.reduce(metric.totals(stats, np.ones((1, len(stats))))[0], len(stats))[0])


def test_context_is_the_mean_known_extent_of_the_top_k() -> None:
    wide = ResolvedRanking(3, (1,), extents=(100.0, 1.0, None), extent_unit="pages")
    fine = ResolvedRanking(12, (1,), extents=(1.0,) * 12, extent_unit="pages")
    empty = ResolvedRanking(0, (0,), extents=(), extent_unit="pages")
    samples = [Sample("q", {}, [{}], {})] * 4
    preds = [pred(wide), pred(fine), pred(empty), pred(None)]
    metric = ContextAtK(k=10)
    assert value(metric, samples, preds) == pytest.approx((50.5 + 1.0) / 2)
    stats = metric.stats(samples, preds)
    assert metric.support(stats, preds) == (2, 2)
    assert metric.detail(stats) == {"unit": "pages", "no_results": 1, "unknown": 1}
    assert metric.names == ("context@10",)


def test_a_metric_over_no_entry_is_null() -> None:
    empty = MetricValue(0.0, 0, 0, (0.0, 0.0), "bootstrap(1000)", {"gate": "<= 0.1"})
    assert empty.value is None and empty.as_json() == {
        "value": None, "n": 0, "denominator": 0, "detail": {"gate": "<= 0.1"}}
    assert MetricValue(0.5, 2, 4).as_json() == {"value": 0.5, "n": 2, "denominator": 4}


def test_demonstration_entries_are_named_beside_the_gate() -> None:
    metric = RecallAtK(k=10, gate=">= 0.9")
    samples = [Sample("q", {}, [{}], {"demonstration": True}), Sample("r", {}, [{}], {})]
    preds = [pred(ResolvedRanking(1, (1,))), pred(ResolvedRanking(1, (1,)))]
    detail = metric.detail(metric.stats(samples, preds))
    # never a pass on demonstration data (issue 37): the gate is named, not judged
    assert detail == {"missing": 0, "gate": ">= 0.9", "pass": None, "data": DEMONSTRATION,
                      "demonstration_entries": 1}
