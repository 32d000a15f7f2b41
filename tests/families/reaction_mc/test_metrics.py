"""Metric `reaction_mc_scores` and the family counter on hand-checked cases: ties, missing,
invalid, out of range, zero best."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg import load_task, run_task

ALL = "all_varying"


@pytest.fixture
def hand_release(question, release) -> Path:
    qs = [
        question("t_q1", ALL, [{"yield": 80}, {"yield": 80}, {"yield": 40}]),  # tie 0/1
        question("t_q2", ALL, [{"yield": 90, "ee": 50}, {"yield": 80, "ee": "98% ee"}]),
        question("t_q3", ALL, [{"yield": 0}, {"yield": 0}, {"yield": 0}]),  # zero best
        question("t_q4", ALL, [{"yield": 50, "dr": "10:1"}, {"yield": 60, "dr": "1:1"}]),
        question("t_q5", ALL, [{"yield": 70}, {"yield": 35}]),  # missing prediction
        question("t_q6", ALL, [{"yield": 70}, {"yield": 35}]),  # "1": a string
        question("t_q7", ALL, [{"yield": 70}, {"yield": 35}]),  # 5: out of range
        question("t_q8", ALL, [{"yield": 70}, {"yield": 35}]),  # true: a bool
    ]
    return release({ALL: qs})


def _run(root: Path, predictions: dict, tmp_path: Path, task: str = ALL):
    path = tmp_path / "pred.json"
    path.write_text(json.dumps(predictions), encoding="utf-8")
    return run_task(
        load_task(f"reaction_mc/{task}"),
        view=None,
        system_cfg={"name": "predictions", "path": str(path)},
        roots={"reaction_mc": str(root)},
    )


PREDICTIONS = {
    "t_q1": 1,
    "t_q2": 0,
    "t_q3": 2,
    "t_q4": 0,
    "t_q6": "1",
    "t_q7": 5,
    "t_q8": True,
    "other_q1": 0,
}


def test_hand_checked_metrics(hand_release: Path, tmp_path: Path) -> None:
    result = _run(hand_release, PREDICTIONS, tmp_path)
    # q1 tie hit 1 | q2 67.5/79.2 | q3 zero best -> 1 | q4 best | q5..q8 -> 0
    q2 = (90 * 0.75) / (80 * 0.99)
    assert result.metrics["avg_relative_score"].value == pytest.approx((1 + q2 + 1 + 1) / 8)
    assert result.metrics["exact_match_accuracy"].value == pytest.approx(3 / 8)
    assert result.metrics["avg_yield_ratio"].value == pytest.approx((1 + 1 + 1 + 50 / 60) / 8)
    assert result.per_sample["avg_relative_score"] == pytest.approx([1.0, q2, 1.0, 1.0, 0, 0, 0, 0])
    for name in ("avg_relative_score", "exact_match_accuracy", "avg_yield_ratio"):
        summary = result.metrics[name]
        assert (summary.n, summary.denominator) == (4, 8)
        # one reaction table (t): no cluster bootstrap can vary, so the samples are resampled
        # and the interval says so (test_cluster_ci.py covers several tables)
        method = "wilson" if name == "exact_match_accuracy" else "bootstrap"  # 0/1 scores
        assert summary.ci95 is not None and summary.ci_method.startswith(method)
        assert summary.clusters is None and "one cluster" in summary.detail["ci_note"]
        assert summary.ci95[0] <= summary.value <= summary.ci95[1]


def test_exact_match_of_a_few_questions_all_wrong_has_a_wide_ci(
    hand_release: Path, tmp_path: Path
) -> None:
    # one wrong answer, one invalid, six missing: 0/8 hits; a bootstrap of eight equal scores
    # gives [0, 0], as certain as a thousand misses
    result = _run(hand_release, {"t_q2": 0, "t_q6": "1"}, tmp_path)
    exact = result.metrics["exact_match_accuracy"]
    assert (exact.value, exact.ci_method) == (0.0, "wilson")
    assert exact.ci95 is not None and exact.ci95[0] == 0.0 and exact.ci95[1] > 0.25


def test_counts_missing_invalid_unknown(hand_release: Path, tmp_path: Path) -> None:
    result = _run(hand_release, PREDICTIONS, tmp_path)
    statuses = result.statuses
    assert statuses["missing"] == 1
    assert statuses["invalid"] + statuses["out_of_range"] == 3  # "1", True, and the 5
    assert statuses["invalid"] == 2  # "1" and True
    assert statuses["out_of_range"] == 1
    assert statuses["error"] == 0
    assert result.system_report.unknown_ids == ["other_q1"]
    assert statuses["ok"] == 4
    assert sum(statuses.values()) == 8


def test_family_counts(hand_release: Path, tmp_path: Path) -> None:
    counts = _run(hand_release, PREDICTIONS, tmp_path).counts
    assert counts == {
        "questions": 8,
        "questions_with_unreadable_scores": 0,
        "questions_all_zero": 1,
    }


def test_statuses_per_question(hand_release: Path, tmp_path: Path) -> None:
    preds = {p.sample_id: p for p in _run(hand_release, PREDICTIONS, tmp_path).predictions}
    assert preds["t_q5"].status == "missing"
    assert preds["t_q6"].status == "invalid"
    assert preds["t_q7"].status == "out_of_range"
    assert preds["t_q8"].status == "invalid"


def test_zero_best_any_valid_pick_scores_one(question, release, tmp_path: Path) -> None:
    root = release({ALL: [question("z_q1", ALL, [{"yield": 0}, {"yield": 0.0}])]})
    result = _run(root, {"z_q1": 1}, tmp_path)
    assert {k: v.value for k, v in result.metrics.items()} == {
        "avg_relative_score": 1.0,
        "exact_match_accuracy": 1.0,
        "avg_yield_ratio": 1.0,
    }


def test_formula_wins_over_stored_numbers(question, release, tmp_path: Path) -> None:
    q = question("s_q1", ALL, [{"yield": 60}, {"yield": 30}])
    q["meta"]["option_relative_scores"] = [0.1, 1.0]  # planted: disagrees with the scores
    q["answer"] = [1]
    root = release({ALL: [q]})
    result = _run(root, {"s_q1": 0}, tmp_path)
    assert result.metrics["avg_relative_score"].value == 1.0
    assert result.metrics["exact_match_accuracy"].value == 1.0


def test_stored_source_uses_release_numbers(question, release, tmp_path: Path) -> None:
    from benchreg.core.types import Prediction
    from benchreg.families.reaction_mc.loader import read_questions, to_sample
    from benchreg.families.reaction_mc.metrics import ReactionScores

    q = question("s_q1", ALL, [{"yield": 60}, {"yield": 30}])
    q["meta"]["option_relative_scores"] = [0.1, 1.0]
    q["answer"] = [1]
    root = release({ALL: [q]})
    samples = [to_sample(x) for x in read_questions(root / f"multiple_choice_{ALL}.json", ALL)]
    preds = [Prediction("s_q1", answer=0)]
    metric = ReactionScores(source="stored")
    stats = metric.stats(samples, preds)
    values = dict(zip(metric.names, metric.reduce(stats.sum(axis=0), len(stats)), strict=True))
    assert values["avg_relative_score"] == 0.1
    assert values["exact_match_accuracy"] == 0.0
    assert metric.support(stats, preds) == (1, 1)


def test_unknown_source_is_an_error_naming_the_choices() -> None:
    from benchreg import BenchregError
    from benchreg.families.reaction_mc.metrics import ReactionScores

    with pytest.raises(BenchregError, match=r"source='guess' is not one of \('formula', 'stored'"):
        ReactionScores(source="guess")


def test_bootstrap_resamples_reduce_per_output(hand_release: Path, tmp_path: Path) -> None:
    """The bootstrap path: totals of (b, k) resamples reduce to (b, 3) values."""
    import numpy as np

    from benchreg.families.reaction_mc.metrics import ReactionScores

    result = _run(hand_release, PREDICTIONS, tmp_path)
    metric = ReactionScores()
    stats = metric.stats(result.samples, result.predictions)
    weights = np.ones((4, len(stats)))
    values = metric.reduce(metric.totals(stats, weights), len(stats))
    assert values.shape == (4, 3)
    assert values[0].tolist() == pytest.approx(
        [result.metrics[name].value for name in metric.names]
    )


def test_random_system_answers_in_range(hand_release: Path) -> None:
    result = run_task(
        load_task(f"reaction_mc/{ALL}"),
        view=None,
        system_cfg={"name": "random", "seed": 3},
        roots={"reaction_mc": str(hand_release)},
    )
    assert result.statuses["ok"] == 8
    assert all(0 <= p.answer < 3 for p in result.predictions)
