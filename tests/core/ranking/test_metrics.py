"""Each ranking metric on hand-computed cases, gates, support, and vectorised reduce."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.ranking.clean_at_k import CleanAtK
from benchreg.core.ranking.false_recall import FalseRecall
from benchreg.core.ranking.gate import Gate
from benchreg.core.ranking.latency_quantile import LatencyQuantile, weighted_quantile
from benchreg.core.ranking.mrr import MRR
from benchreg.core.ranking.ndcg_at_k import NDCGAtK
from benchreg.core.ranking.recall_at_k import RecallAtK
from benchreg.core.ranking.resolution import ResolvedRanking
from benchreg.core.types import Prediction, Sample, Status


def sample(n_gold: int, **meta: object) -> Sample:
    return Sample("q", {}, [{"g": i} for i in range(n_gold)], meta)


def pred(resolved: ResolvedRanking | None, latency: float | None = None) -> Prediction:
    p = Prediction("q", answer={}, latency_s=latency)
    if resolved is None:
        p.status = Status.MISSING
    p.resolved = resolved
    return p


def value(metric, samples, preds) -> float:  # type: ignore[no-untyped-def]
    stats = metric.stats(samples, preds)
    return float(metric.reduce(metric.totals(stats, np.ones((1, len(stats))))[0], len(stats))[0])


# gold 0 first hit at rank 2, gold 1 at rank 12, gold 2 never
R = ResolvedRanking(n_results=20, first_hit=(2, 12, 0), max_score=3.0)


def test_recall_mrr_ndcg_hand_computed() -> None:
    assert value(RecallAtK(k=10), [sample(3)], [pred(R)]) == pytest.approx(1 / 3)
    assert value(RecallAtK(k=20), [sample(3)], [pred(R)]) == pytest.approx(2 / 3)
    assert value(MRR(), [sample(3)], [pred(R)]) == pytest.approx(0.5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert value(NDCGAtK(k=10), [sample(3)], [pred(R)]) == pytest.approx((1 / math.log2(3)) / idcg)


def test_ndcg_counts_a_result_hitting_two_new_gold_items_once() -> None:
    both = ResolvedRanking(n_results=1, first_hit=(1, 1))
    assert value(NDCGAtK(k=10), [sample(2)], [pred(both)]) == pytest.approx(
        1 / (1 + 1 / math.log2(3))
    )
    assert value(RecallAtK(k=10), [sample(2)], [pred(both)]) == 1.0


def test_unanswerable_and_missing_entries() -> None:
    samples = [sample(3), sample(0), sample(1)]
    preds = [pred(R), pred(ResolvedRanking(0, ())), pred(None)]
    metric = RecallAtK(k=10, gate=">= 0.9")
    stats = metric.stats(samples, preds)
    assert value(metric, samples, preds) == pytest.approx((1 / 3 + 0) / 2)
    assert metric.support(stats, preds) == (1, 2)  # n scored, denominator answerable
    assert metric.detail(stats) == {"missing": 1, "gate": ">= 0.9", "pass": False}


def test_false_recall_rules() -> None:
    empty = ResolvedRanking(0, ())
    weak = ResolvedRanking(3, (), max_score=0.4)
    unscored = ResolvedRanking(2, (), max_score=None, n_unscored=2)
    samples = [sample(0)] * 4
    preds = [pred(empty), pred(weak), pred(unscored), pred(None)]
    assert value(FalseRecall(), samples, preds) == pytest.approx(3 / 4)  # any item counts
    assert value(FalseRecall(strong_score=0.5), samples, preds) == pytest.approx(2 / 4)
    assert value(FalseRecall(strong_score=0.4), samples, preds) == pytest.approx(3 / 4)
    assert value(FalseRecall(), [sample(2)], [pred(R)]) == 0.0  # not applicable: 0/0


def test_clean_at_k_counts_unknown_apart() -> None:
    leak = ResolvedRanking(10, (1,), flagged={"future": (4,)})
    late_leak = ResolvedRanking(20, (1,), flagged={"future": (15,)})
    unknown = ResolvedRanking(10, (1,), unknown={"future": (2,)})
    samples = [sample(1, as_of="t"), sample(1, as_of="t"), sample(1, as_of="t"), sample(1)]
    preds = [pred(leak), pred(late_leak), pred(unknown), pred(leak)]
    metric = CleanAtK(flag="future", when="as_of", k=10)
    stats = metric.stats(samples, preds)
    assert value(metric, samples, preds) == pytest.approx(2 / 3)
    assert metric.detail(stats) == {"missing": 0, "unknown": 1}
    assert metric.support(stats, preds) == (3, 3)


def test_latency_quantile_matches_numpy_and_weights_repeat_values() -> None:
    rng = np.random.default_rng(0)
    values = rng.random(37)
    for q in (0.0, 0.5, 0.95, 1.0):
        got = weighted_quantile(values, np.ones(37), q)
        assert float(got) == pytest.approx(float(np.quantile(values, q)), abs=1e-12)
    weights = rng.integers(0, 4, size=(5, 37)).astype(float)
    got = weighted_quantile(values, weights, 0.95)
    for b in range(5):
        expected = np.quantile(np.repeat(values, weights[b].astype(int)), 0.95)
        assert got[b] == pytest.approx(expected, abs=1e-12)
    metric = LatencyQuantile(q=0.5)
    preds = [pred(R, latency=x) for x in (0.3, None, 0.1, 0.2)]
    assert value(metric, [sample(1)] * 4, preds) == pytest.approx(0.2)
    assert metric.support(metric.stats([sample(1)] * 4, preds), preds) == (3, 4)


def test_reduce_is_vectorised_for_the_bootstrap() -> None:
    samples = [sample(3), sample(1), sample(0)]
    preds = [pred(R), pred(ResolvedRanking(5, (1,))), pred(None)]
    for metric in (RecallAtK(), MRR(), NDCGAtK(), FalseRecall()):
        stats = metric.stats(samples, preds)
        weights = np.array([[1, 1, 1], [2, 0, 1], [0, 3, 0]], dtype=float)
        batch = metric.reduce(metric.totals(stats, weights), 3)
        one_by_one = [metric.reduce(metric.totals(stats, w[None])[0], 3) for w in weights]
        np.testing.assert_allclose(batch, np.array(one_by_one))


def test_gate_parse_and_report() -> None:
    assert Gate.parse(">= 0.90").report(0.9) == {"gate": ">= 0.9", "pass": True}
    assert Gate.parse("<=0.1").report(0.2)["pass"] is False
    assert Gate.parse(None) is None
    with pytest.raises(BenchregError):
        Gate.parse("at least 0.9")


def test_a_latency_quantile_without_any_latency_is_no_number() -> None:
    """Answers read from a file carry no latency: the quantile is NaN (written as null, shown
    blank), never a 0.0 that would look like a measured latency."""
    import numpy as np

    from benchreg.core.ranking.latency_quantile import LatencyQuantile, weighted_quantile

    metric = LatencyQuantile(0.5)
    stats = np.full((4, 1), np.nan)
    point = metric.reduce(metric.totals(stats, np.ones((1, 4)))[0], 4)
    assert np.isnan(point).all()
    assert np.isnan(weighted_quantile(np.array([1.0, 2.0]), np.zeros((3, 2)), 0.5)).all()
    assert weighted_quantile(np.array([1.0, 3.0]), np.ones((1, 2)), 0.5).tolist() == [2.0]
    from benchreg.core.metric import MetricValue

    shown = MetricValue(float(point[0]), 0, 4, (float("nan"), float("nan")), "bootstrap(10)")
    assert shown.as_json() == {"value": None, "n": 0, "denominator": 4}
