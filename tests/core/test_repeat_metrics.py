"""`run.repeats=k` metrics: pass@j for every j = 1..k (Chen et al.'s unbiased estimator, checked
against an independent binomial form), mean@k and majority vote, each with n, denominator and a
95% CI."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchreg import load_task
from benchreg.core.scoring import repeat_scores
from benchreg.core.stats import pass_at_k
from benchreg.core.types import Prediction, Sample


def comb_pass_at_k(n: int, c: int, k: int) -> float:
    """The estimator as the paper writes it, 1 - C(n-c, k) / C(n, k), in exact integers (an
    independent implementation: benchreg uses the product form)."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)  # comb(m, k) = 0 when k > m


@pytest.mark.parametrize("n", range(1, 13))
def test_the_estimator_equals_the_binomial_form(n: int) -> None:
    counts = np.arange(n + 1)
    for k in range(1, n + 1):
        expected = [comb_pass_at_k(n, int(c), k) for c in counts]
        assert pass_at_k(n, counts, k) == pytest.approx(expected, abs=1e-12)


def test_the_estimator_at_its_ends_and_out_of_range() -> None:
    assert pass_at_k(5, [0, 5], 3).tolist() == [0.0, 1.0]
    assert pass_at_k(4, [1, 2, 3], 1) == pytest.approx([0.25, 0.5, 0.75])  # pass@1 = c/n
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(3, [1], 4)
    with pytest.raises(ValueError, match=r"0\.\.3"):
        pass_at_k(3, [4], 1)


def _runs(right: np.ndarray) -> tuple[list[Sample], list[list[Prediction]]]:
    """MolP2S-shaped samples (gold 0) and k runs of answers: 0 where ``right`` (samples x k)."""
    n, k = right.shape
    samples = [Sample(f"s{i}", {}, 0) for i in range(n)]
    runs = [
        [Prediction(f"s{i}", answer=0 if right[i, r] else 1) for i in range(n)] for r in range(k)
    ]
    return samples, runs


def test_pass_at_every_k_is_the_average_of_the_estimator_with_a_ci() -> None:
    rng = np.random.default_rng(7)
    right = rng.random((40, 5)) < 0.35
    samples, runs = _runs(right)
    out, _ = repeat_scores(load_task("molp2s/gap"), samples, runs, n_boot=300, seed=1)
    c = right.sum(axis=1)
    for k in range(1, 6):
        metric = out[f"accuracy_pass@{k}"]
        expected = sum(comb_pass_at_k(5, int(ci), k) for ci in c) / len(c)
        assert metric.value == pytest.approx(expected, abs=1e-12)
        assert (metric.n, metric.denominator) == (40, 40)
        assert metric.ci95 is not None and metric.ci95[0] <= metric.value <= metric.ci95[1]
        assert metric.ci_method == "bootstrap(300) over samples"
        assert metric.detail["k"] == k and metric.detail["repeats"] == 5
    assert "accuracy_pass@6" not in out
    assert out["accuracy_pass@5"].value == pytest.approx(right.any(axis=1).mean())
    values = [out[f"accuracy_pass@{k}"].value for k in range(1, 6)]
    assert values == sorted(values)  # more draws, more chances


def test_mean_at_k_and_the_majority_carry_cis() -> None:
    right = np.array([[1, 1, 0], [0, 0, 0], [1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 1]], bool)
    samples, runs = _runs(right)
    out, each = repeat_scores(load_task("molp2s/gap"), samples, runs, n_boot=200)
    mean = out["accuracy_repeats_mean"]
    assert mean.value == pytest.approx(right.mean())
    assert mean.value == pytest.approx(out["accuracy_pass@1"].value)
    assert mean.detail["means"].startswith("mean@3") and len(mean.detail["per_repeat"]) == 3
    assert "clustered by sample" in mean.ci_method and mean.ci95[0] <= mean.value <= mean.ci95[1]
    majority = out["accuracy_majority"]
    votes = (right.sum(axis=1) >= 2).mean()  # 3 repeats, 2 answers: the majority is right
    assert majority.value == pytest.approx(votes)
    assert (majority.n, majority.denominator) == (6, 6)
    assert majority.ci95 is not None and majority.ci_method  # the metric's own CI
    assert len(each) == 3


def test_without_a_bootstrap_the_numbers_stay_and_carry_no_ci() -> None:
    samples, runs = _runs(np.array([[1, 0], [0, 0], [1, 1]], bool))
    out, _ = repeat_scores(load_task("molp2s/gap"), samples, runs, n_boot=0)
    assert out["accuracy_pass@2"].value == pytest.approx(2 / 3)
    assert out["accuracy_pass@1"].ci95 is None and out["accuracy_pass@1"].n == 3


def test_repeat_rows_count_the_answers_of_the_repeats_not_the_first_repeats_statuses() -> None:
    """Issue 37: the pass@k, mean@k and majority rows show n/denominator over the answers they
    are computed from (every repeat; the majority vote), with those answers' statuses."""
    from benchreg.core.summary import run_table, support
    from benchreg.core.types import Status

    samples, runs = _runs(np.ones((4, 3), dtype=bool))
    for r, i, status in ((1, 0, Status.INVALID), (2, 0, Status.INVALID), (1, 1, Status.ERROR)):
        runs[r][i] = Prediction(f"s{i}", status=status, detail="planted")
    runs[0][0] = Prediction("s0", status=Status.MISSING)  # sample 0: no ok answer at all
    out, _ = repeat_scores(load_task("molp2s/gap"), samples, runs, n_boot=0, seed=1)
    metrics = {name: {"value": v.value, "n": v.n, "denominator": v.denominator,
                      "detail": v.detail} for name, v in out.items()}
    record = {"task": "molp2s/gap", "model": "m", "primary": "accuracy_pass@3", "n": 4,
              "statuses": {"ok": 3, "missing": 1}, "metrics": metrics}
    for name in ("accuracy_pass@3", "accuracy_repeats_mean"):
        sup = support(record, metrics[name])
        assert (sup.n, sup.denominator) == (8, 12), name
        assert sup.not_ok == {"missing": 1, "invalid": 2, "error": 1}, name
    sup = support(record, metrics["accuracy_majority"])
    assert (sup.n, sup.denominator, sup.not_ok) == (3, 4, {"missing": 1})
    table = run_table(record, answered=True)
    assert "n/denominator = answers of the 3 repeats" in table
