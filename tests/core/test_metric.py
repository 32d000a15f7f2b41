"""Metrics as per-sample statistics plus an aggregate; CIs from resampled statistics."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.metric import MeanMetric, Metric
from benchreg.core.scoring import score
from benchreg.core.spec import TaskSpec
from benchreg.core.stats import bootstrap_mean_ci, bootstrap_totals_ci, resample_weights
from benchreg.core.task import Task, bind
from benchreg.core.types import Prediction, Sample, Status


class MicroPRF(Metric):
    """tp/fp/fn per sample -> precision, recall, F1 of the totals."""

    outputs = ("precision", "recall", "f1")

    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        rows = []
        for s, p in zip(samples, predictions, strict=True):
            gold, pred = set(s.gold), set(p.answer if p.ok else [])
            rows.append((len(gold & pred), len(pred - gold), len(gold - pred)))
        return np.asarray(rows, dtype=float)

    def reduce(self, totals: np.ndarray, n: int) -> np.ndarray:
        tp, fp, fn = totals[..., 0], totals[..., 1], totals[..., 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(tp > 0, tp / (tp + fp), 0.0)
            r = np.where(tp > 0, tp / (tp + fn), 0.0)
            f = np.where(tp > 0, 2 * p * r / (p + r), 0.0)
        return np.stack([p, r, f], axis=-1)


class Closeness(MeanMetric):
    outputs = ("closeness",)

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale

    def score(self, sample: Sample, prediction: Prediction) -> Sequence[float]:
        return (1.0 / (1.0 + abs(prediction.answer - sample.gold) / self.scale),)


registry.metrics.add("test_micro_prf", MicroPRF)
registry.metrics.add("test_closeness", Closeness)


def _spec(metrics: list[dict], **extra: object) -> Task:
    """A bound task of the given metrics (and other spec fields)."""
    spec = TaskSpec.model_validate(
        {
            "name": "t/x",
            "family": "molp2s",
            "description": "d",
            "loader": "molp2s",
            "answer_schema": "candidate_index",
            "metrics": metrics,
            **extra,
        }
    )
    return bind(spec)


def _item_sets(n: int, seed: int) -> tuple[list[Sample], list[Prediction]]:
    rng = np.random.default_rng(seed)
    samples, preds = [], []
    for i in range(n):
        gold = {int(x) for x in rng.integers(0, 6, size=rng.integers(0, 4))}
        pred = {int(x) for x in rng.integers(0, 6, size=rng.integers(0, 4))}
        samples.append(Sample(f"s{i}", {}, sorted(gold)))
        preds.append(Prediction(f"s{i}", answer=sorted(pred)))
    return samples, preds


def test_multi_value_metric_reports_every_value_and_its_primary() -> None:
    samples, preds = _item_sets(50, seed=3)
    scores = score(_spec([{"name": "test_micro_prf", "primary": True}]), samples, preds)
    assert scores.primary == "f1"
    assert set(scores.values) == {"precision", "recall", "f1"}
    tp = sum(len(set(s.gold) & set(p.answer)) for s, p in zip(samples, preds, strict=True))
    fp = sum(len(set(p.answer) - set(s.gold)) for s, p in zip(samples, preds, strict=True))
    assert scores.values["precision"].value == pytest.approx(tp / (tp + fp))
    assert all(v.ci95 is not None and v.n == 50 for v in scores.values.values())


def test_bootstrap_of_totals_equals_recomputing_on_resampled_samples() -> None:
    """Same seed, same resamples: weighting totals == recomputing the metric on the resample."""
    samples, preds = _item_sets(40, seed=5)
    metric = MicroPRF()
    stats = metric.stats(samples, preds)
    rng = np.random.default_rng(11)
    recomputed = []
    for _ in range(200):
        idx = rng.integers(0, 40, size=40)
        sub_s = [samples[i] for i in idx]
        sub_p = [preds[i] for i in idx]
        recomputed.append(metric.reduce(metric.stats(sub_s, sub_p).sum(axis=0), 40))
    lo, hi = np.percentile(np.asarray(recomputed), [2.5, 97.5], axis=0)
    cis = bootstrap_totals_ci(stats, metric.totals, metric.reduce, n_boot=200, seed=11)
    assert [c[0] for c in cis] == pytest.approx(list(lo), abs=1e-12)
    assert [c[1] for c in cis] == pytest.approx(list(hi), abs=1e-12)


def test_resamples_do_not_depend_on_the_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchreg.core import stats as stats_module

    whole = np.concatenate(list(resample_weights(30, 50, seed=2)))
    monkeypatch.setattr(stats_module, "RESAMPLE_CELLS", 30 * 7)  # chunks of 7 resamples
    chunks = list(resample_weights(30, 50, seed=2))
    assert len(chunks) == 8
    assert np.array_equal(whole, np.concatenate(chunks))
    assert np.all(whole.sum(axis=1) == 30)


def test_mean_ci_matches_the_plain_index_bootstrap() -> None:
    values = np.random.default_rng(0).random(64)
    idx = np.random.default_rng(4).integers(0, 64, size=(300, 64))
    lo, hi = np.percentile(values[idx].mean(axis=1), [2.5, 97.5])
    got = bootstrap_mean_ci(values, n_boot=300, seed=4)
    assert got == pytest.approx((lo, hi), abs=1e-12)


def test_binary_per_sample_scores_get_a_wilson_interval() -> None:
    samples = [Sample(f"s{i}", {"candidate_completed_smiles": ["C", "N"]}, 0) for i in range(10)]
    preds = [Prediction(f"s{i}", answer=0 if i < 3 else 1) for i in range(10)]
    preds[9].status = Status.MISSING
    scores = score(_spec([{"name": "accuracy", "primary": True}]), samples, preds)
    acc = scores.values["accuracy"]
    assert (acc.value, acc.n, acc.denominator, acc.ci_method) == (0.3, 10, 10, "wilson")
    assert acc.ci95 == pytest.approx((0.10779, 0.60322), abs=1e-4)
    assert scores.per_sample["accuracy"].tolist() == [1.0] * 3 + [0.0] * 7


def test_params_reach_the_metric_and_label_renames_a_single_value() -> None:
    samples = [Sample("a", {}, 0.0), Sample("b", {}, 0.0)]
    preds = [Prediction("a", answer=2.0), Prediction("b", answer=0.0)]
    spec = _spec(
        [
            {
                "name": "test_closeness",
                "params": {"scale": 2.0},
                "label": "c2",
                "primary": True,
                "ci": "bootstrap",
            }
        ]
    )
    scores = score(spec, samples, preds, n_boot=100)
    assert scores.primary == "c2"
    assert scores.values["c2"].value == pytest.approx((0.5 + 1.0) / 2)
    assert scores.values["c2"].ci_method == "bootstrap(100)"


def test_label_on_a_multi_value_metric_is_an_error() -> None:
    with pytest.raises(BenchregError, match="reports 3 values"):
        _spec([{"name": "test_micro_prf", "primary": True, "label": "x"}])


def test_no_bootstrap_leaves_non_binary_values_without_ci() -> None:
    samples = [Sample("a", {}, 0.0), Sample("b", {}, 1.0)]
    preds = [Prediction("a", answer=0.5), Prediction("b", answer=1.0)]
    scores = score(_spec([{"name": "test_closeness", "primary": True}]), samples, preds, n_boot=0)
    assert scores.values["closeness"].ci95 is None


def test_a_degraded_parse_is_flagged_and_scored_as_given() -> None:
    from benchreg.core.scoring import parse_and_check, sample_rows
    from benchreg.core.types import Degraded

    def lenient(text: str, sample: Sample) -> object:
        return Degraded(int(text.strip()), "bare number instead of JSON") if text.isdigit() else 0

    registry.parsers.add("test_lenient", lenient)
    spec = _spec([{"name": "accuracy", "primary": True}], parser="test_lenient")
    samples = [Sample(f"s{i}", {"candidate_completed_smiles": ["C", "N"]}, 1) for i in range(2)]
    preds = [Prediction("s0", raw_text="1"), Prediction("s1", raw_text="{...}")]
    parse_and_check(spec, samples, preds)
    assert preds[0].answer == 1 and preds[0].degraded == "bare number instead of JSON"
    assert preds[1].answer == 0 and preds[1].degraded is None
    rows = sample_rows(samples, preds, {}, "accuracy")
    assert rows[0]["degraded"] == "bare number instead of JSON" and "degraded" not in rows[1]
