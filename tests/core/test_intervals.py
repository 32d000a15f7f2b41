"""Issue 37 item 1: intervals that claim no certainty they do not have. No 0/1 metric gets a
zero-width interval for n >= 1; ECE, pass@k and majority carry intervals; gates are judged on
the interval; a task naming a `cluster` resamples whole clusters."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from benchreg import load_task
from benchreg.core.ranking.gate import Gate
from benchreg.core.scoring import ece_ci, probability_scores, repeat_scores, score, task_clusters
from benchreg.core.spec import TaskSpec
from benchreg.core.stats import bootstrap_mean_ci, cluster_weights, resample_indices
from benchreg.core.task import bind
from benchreg.core.types import Prediction, Sample, Status


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval from its textbook form (independent of benchreg's)."""
    p = k / n
    centre = (2 * k + z * z) / (2 * (n + z * z))
    half = z * math.sqrt(z * z + 4 * k * (1 - p)) / (2 * (n + z * z))
    return max(0.0, centre - half), min(1.0, centre + half)


def _task(ci: str = "auto", **extra: object):
    spec = {
        "name": "t/x",
        "family": "molp2s",
        "description": "d",
        "loader": "molp2s",
        "answer_schema": "candidate_index",
        "metrics": [{"name": "accuracy", "primary": True, "ci": ci}],
        **extra,
    }
    return bind(TaskSpec.model_validate(spec))


def _samples(right: list[bool], groups: list[str] | None = None):
    samples = [
        Sample(f"s{i}", {}, 0, {"group": groups[i]} if groups else {}) for i in range(len(right))
    ]
    preds = [Prediction(f"s{i}", answer=0 if r else 1) for i, r in enumerate(right)]
    return samples, preds


@settings(max_examples=60, deadline=None)
@given(
    right=st.lists(st.booleans(), min_size=1, max_size=40),
    ci=st.sampled_from(["auto", "bootstrap"]),
    clustered=st.booleans(),
)
def test_no_interval_of_a_0_1_metric_is_zero_width(
    right: list[bool], ci: str, clustered: bool
) -> None:
    groups = [f"g{i // 3}" for i in range(len(right))] if clustered else None
    extra = {"cluster": "meta.group"} if clustered else {}
    samples, preds = _samples(right, groups)
    value = score(_task(ci, **extra), samples, preds, n_boot=200, progress=False).values[
        "accuracy"
    ]
    assert value.ci95 is not None
    lo, hi = value.ci95
    assert lo < hi and lo <= value.value <= hi


def test_auto_0_1_scores_get_the_textbook_wilson_interval() -> None:
    samples, preds = _samples([True] * 7 + [False] * 23)
    value = score(_task(), samples, preds, progress=False).values["accuracy"]
    assert value.ci_method == "wilson"
    assert value.ci95 == pytest.approx(wilson(7, 30), abs=1e-12)


@pytest.mark.parametrize(("right", "k"), [([True] * 9, 9), ([False] * 30, 0)])
def test_a_bootstrap_at_the_bound_becomes_the_wilson_interval(right: list[bool], k: int) -> None:
    samples, preds = _samples(right)
    value = score(_task("bootstrap"), samples, preds, progress=False).values["accuracy"]
    assert value.ci95 == pytest.approx(wilson(k, len(right)), abs=1e-12)
    assert value.ci_method == "wilson (bootstrap had no width)" and value.detail["ci_note"]


def test_ui_screenshot_example_zero_recall_on_30() -> None:
    # the example: 0/30 gives [0, 0.114], not [0, 0]
    lo, hi = wilson(0, 30)
    assert (lo, round(hi, 3)) == (0.0, 0.114)


@pytest.mark.parametrize(
    ("gate", "ci", "verdict"),
    [
        (">= 0.90", (0.70, 1.0), "inconclusive"),  # 9/9: Wilson spans the gate
        (">= 0.90", (0.91, 0.99), "pass"),
        (">= 0.90", (0.50, 0.89), "fail"),
        ("<= 0.10", (0.0, 0.09), "pass"),
        ("<= 0.10", (0.05, 0.20), "inconclusive"),
        ("<= 0.10", (0.11, 0.30), "fail"),
        ("> 0.5", (0.5, 0.6), "inconclusive"),
        ("< 0.5", (0.5, 0.6), "fail"),
    ],
)
def test_a_gate_is_judged_on_its_interval(gate: str, ci: tuple[float, float], verdict: str):
    out = Gate.parse(gate).verdict(sum(ci) / 2, ci)
    assert out["verdict"] == verdict
    assert out["pass"] == {"pass": True, "fail": False}.get(verdict)
    assert out["judged_on"] == "95% CI"


def test_a_gate_without_an_interval_says_what_it_judged() -> None:
    out = Gate.parse(">= 0.9").verdict(0.95, None)
    assert (out["verdict"], out["judged_on"]) == ("pass", "value (no interval)")
    assert Gate.parse(">= 0.9").verdict(None, None)["verdict"] == "n/a"


def test_pass_at_k_and_majority_at_the_bound_are_not_zero_width() -> None:
    samples = [Sample(f"s{i}", {}, 0) for i in range(8)]
    runs = [[Prediction(f"s{i}", answer=0) for i in range(8)] for _ in range(3)]
    out, _ = repeat_scores(load_task("molp2s/gap"), samples, runs, n_boot=200, seed=0)
    names = ("pass@1", "pass@3", "majority", "repeats_mean")
    for name in (f"accuracy_{n}" for n in names):
        lo, hi = out[name].ci95
        assert lo < hi == 1.0
    assert out["accuracy_pass@3"].ci95 == pytest.approx(wilson(8, 8), abs=1e-12)


def _ece(confidence: np.ndarray, correct: np.ndarray) -> float:
    """ECE in 10 equal-width bins (right-closed), written out."""
    total = 0.0
    for b in range(10):
        lo, hi = b / 10, (b + 1) / 10
        inside = (confidence > lo) & (confidence <= hi) if b else confidence <= hi
        if inside.any():
            total += inside.sum() / len(confidence) * abs(
                correct[inside].mean() - confidence[inside].mean()
            )
    return total


def test_ece_has_a_bootstrap_interval_of_its_resamples() -> None:
    rng = np.random.default_rng(3)
    confidence = rng.uniform(0.3, 1.0, 60)
    correct = (rng.random(60) < confidence).astype(float)
    lo, hi = ece_ci(confidence, correct, n_boot=300, seed=5)
    # the same resamples, each ECE recomputed from the resampled samples themselves
    values = [
        _ece(confidence[row], correct[row])
        for chunk in resample_indices(60, 300, 5)
        for row in chunk
    ]
    assert (lo, hi) == pytest.approx(tuple(np.percentile(values, [2.5, 97.5])), abs=1e-12)
    assert lo < _ece(confidence, correct) < hi


def test_probability_scores_carry_an_ece_interval() -> None:
    rng = np.random.default_rng(4)
    samples, preds = [], []
    for i in range(40):
        p = rng.dirichlet([1, 1, 1]).tolist()
        samples.append(Sample(f"s{i}", {}, int(rng.integers(0, 3))))
        preds.append(
            Prediction(f"s{i}", answer=0, status=Status.OK, metadata={"option_probs": p})
        )
    out = probability_scores(samples, preds, n_boot=200, seed=0)
    assert out["ece"].ci95 is not None and out["ece"].ci_method == "bootstrap(200)"
    clustered = probability_scores(
        samples, preds, n_boot=200, seed=0, clusters=np.arange(40) // 4
    )
    assert clustered["ece"].ci_method == "cluster bootstrap" and clustered["ece"].clusters == 10


def test_cluster_weights_resample_whole_clusters_scaled_to_n() -> None:
    members = np.array([0, 0, 0, 1, 2, 2])
    weights = cluster_weights(np.array([[2.0, 0.0, 1.0]]), members)
    # cluster 0 twice (3 samples each), cluster 2 once (2 samples): 8 samples, scaled to 6
    assert weights[0].tolist() == pytest.approx([1.5, 1.5, 1.5, 0.0, 0.75, 0.75])
    values = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    assert float((weights @ values)[0] / 6) == pytest.approx(6 / 8)


def test_correlated_clusters_widen_the_interval() -> None:
    values = [1.0] * 20 + [0.0] * 20 + [0.5] * 20
    clusters = np.repeat(np.arange(6), 10)  # each cluster all 1, all 0 or all 0.5
    iid = bootstrap_mean_ci(values, n_boot=500, seed=0)
    clustered = bootstrap_mean_ci(values, n_boot=500, seed=0, clusters=clusters)
    assert clustered[1] - clustered[0] > 2 * (iid[1] - iid[0])


def test_a_task_names_its_cluster_by_a_dotted_path() -> None:
    task = _task(cluster="gold.0.source_id")
    samples = [
        Sample("a", {}, [{"source_id": "doc1"}]),
        Sample("b", {}, [{"source_id": "doc2"}]),
        Sample("c", {}, [{"source_id": "doc1"}]),
        Sample("d", {}, []),  # no gold source: a cluster of its own
        Sample("e", {}, []),
    ]
    assert task_clusters(task, samples).tolist() == [0, 1, 0, 2, 3]
    assert task_clusters(_task(), samples) is None


@pytest.mark.parametrize("path", ["nowhere.x", "meta..x", ""])
def test_a_cluster_path_must_start_at_a_sample_field(path: str) -> None:
    with pytest.raises(ValidationError, match="cluster"):
        _task(cluster=path)


def test_clusters_that_all_agree_still_give_an_interval() -> None:
    # two clusters of 2/3 each: every cluster resample gives 2/3; Wilson of 2/3 over 2 units
    groups = ["a"] * 3 + ["b"] * 3
    samples, preds = _samples([False, True, True, True, False, True], groups)
    value = score(_task(cluster="meta.group"), samples, preds, n_boot=200, progress=False)
    accuracy = value.values["accuracy"]
    assert accuracy.ci_method == "cluster bootstrap" and accuracy.clusters == 2
    assert accuracy.ci95 == pytest.approx(wilson(4 / 3, 2), abs=1e-12)


def test_clustered_metrics_name_the_method_and_the_cluster_count() -> None:
    groups = [f"g{i % 5}" for i in range(30)]
    samples, preds = _samples([i % 5 < 2 for i in range(30)], groups)
    value = score(_task(cluster="meta.group"), samples, preds, n_boot=200, progress=False)
    accuracy = value.values["accuracy"].as_json()
    assert accuracy["ci_method"] == "cluster bootstrap" and accuracy["clusters"] == 5


def test_the_terminal_table_shows_the_verdict_and_the_clusters() -> None:
    from benchreg.core.summary import gate_text, run_table

    metric = {
        "value": 1.0,
        "n": 9,
        "denominator": 9,
        "ci95": [0.70, 1.0],
        "ci_method": "cluster bootstrap",
        "clusters": 3,
        "detail": {"gate": ">= 0.9", "pass": None, "verdict": "inconclusive"},
    }
    record = {"task": "t", "model": "m", "primary": "a", "metrics": {"a": metric}}
    table = run_table({**record, "statuses": {"ok": 9}})
    assert ">= 0.9 inconclusive" in table
    assert "cluster bootstrap over 3 clusters" in table
    assert gate_text({"gate": ">= 0.9", "pass": False, "verdict": "fail"}) == ">= 0.9 FAIL"
    assert gate_text({"gate": ">= 0.9", "pass": True}) == ">= 0.9 pass"  # an older record


def test_with_the_bootstrap_off_a_clustered_task_keeps_wilson_and_says_so() -> None:
    groups = [f"g{i % 5}" for i in range(30)]
    samples, preds = _samples([i % 5 < 2 for i in range(30)], groups)
    value = score(_task(cluster="meta.group"), samples, preds, n_boot=0, progress=False)
    accuracy = value.values["accuracy"]
    assert accuracy.ci_method == "wilson" and accuracy.ci95 == pytest.approx(wilson(12, 30))
    assert "independent" in accuracy.detail["ci_note"]
