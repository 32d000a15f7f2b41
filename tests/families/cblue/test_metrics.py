"""Metrics as per-sample statistics + an aggregate: official semantics, classification averages
(vs scikit-learn), empty/invalid answers, bootstrap totals, the family counter."""

from __future__ import annotations

import random

import numpy as np
import pytest

from benchreg.core.types import Prediction, Sample, Status
from benchreg.families.cblue.metrics import (
    LabelPRF,
    MicroPRF,
    ReplyRouge,
    ReportRouge,
    cblue_counts,
)

from .cblue_helpers import evaluate


def test_micro_scores_zero_without_true_positives_even_when_both_empty() -> None:
    samples = [Sample("a", {}, []), Sample("b", {}, [])]
    preds = [Prediction("a", answer=[]), Prediction("b", answer=[])]
    values, _ = evaluate(MicroPRF(), samples, preds)
    assert values["f1"] == 0.0


@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_label_scores_match_scikit_learn_classification_report(average: str) -> None:
    from sklearn.metrics import classification_report

    rng = random.Random(20240123)
    labels = ["甲", "乙", "丙", "丁", "非上述类型", " 甲"]
    prefix = "macro-" if average == "macro" else ""
    for _ in range(200):
        n = rng.randint(1, 30)
        gold = [rng.choice(labels[:4]) for _ in range(n)]
        pred = [rng.choice(labels) for _ in range(n)]
        report = classification_report(gold, pred, output_dict=True, zero_division=0)
        expected = report[f"{average} avg"]
        samples = [Sample(str(i), {"task_dataset": "CHIP-CTC"}, g) for i, g in enumerate(gold)]
        preds = [Prediction(str(i), answer=p) for i, p in enumerate(pred)]
        ours, _ = evaluate(LabelPRF(average=average), samples, preds)
        assert ours[f"{prefix}precision"] == pytest.approx(expected["precision"], abs=1e-12)
        assert ours[f"{prefix}recall"] == pytest.approx(expected["recall"], abs=1e-12)
        assert ours[f"{prefix}f1"] == pytest.approx(expected["f1-score"], abs=1e-12)


def test_label_totals_of_resamples_equal_scores_of_resampled_samples() -> None:
    """A bootstrap resample (counts as weights) scores as the resampled list of samples does."""
    rng = random.Random(7)
    labels = ["相关", "不相关", "其他"]
    samples = [
        Sample(str(i), {"task_dataset": "KUAKE-IR"}, rng.choice(labels[:2])) for i in range(20)
    ]
    preds = [Prediction(str(i), answer=rng.choice(labels)) for i in range(20)]
    for average in ("macro", "weighted"):
        metric = LabelPRF(average=average)
        stats = metric.stats(samples, preds)
        picks = [[rng.randrange(20) for _ in range(20)] for _ in range(5)]
        weights = np.array([np.bincount(p, minlength=20) for p in picks], dtype=float)
        boot = metric.reduce(metric.totals(stats, weights), 20)
        for row, pick in zip(boot, picks, strict=True):
            direct, _ = evaluate(
                LabelPRF(average=average),
                [samples[i] for i in pick],
                [preds[i] for i in pick],
            )
            assert list(row) == pytest.approx(list(direct.values()), abs=1e-12)


def test_invalid_and_missing_predictions_score_as_wrong_not_as_the_empty_label() -> None:
    """Item 4 of issue 19: an invalid or missing prediction never counts as the first official
    label (the empty answer's label); it misses its gold class and is a wrong label outside the
    labels (issue 37: a class of its own, which has no support, so the weighted average is as
    before while a macro average gains a class at 0)."""
    task = {"task_dataset": "CHIP-STS"}
    samples = [Sample(str(i), task, g) for i, g in enumerate(["是的", "不是", "是的"])]
    preds = [
        Prediction("0", answer=None, status=Status.INVALID),
        Prediction("1", status=Status.MISSING),
        Prediction("2", answer=""),  # an ok empty answer: the first label, as officially
    ]
    metric = LabelPRF(average="weighted")
    values, detail = evaluate(metric, samples, preds)
    # 是的: true 2, predicted 1, hit 1 -> P 1, R 1/2, F1 2/3; 不是: true 1, nothing predicted
    assert values == pytest.approx({"precision": 2 / 3, "recall": 1 / 3, "f1": 4 / 9}, abs=1e-12)
    assert detail["classes"] == 4  # 是的, 不是 and the two answers' own classes
    as_empty = [Prediction(str(i), answer="") for i in range(3)]
    assert evaluate(LabelPRF(average="weighted"), samples, as_empty)[0]["f1"] > values["f1"]


@pytest.mark.parametrize("status", [Status.INVALID, Status.MISSING, Status.ERROR])
def test_a_prediction_not_scored_as_given_earns_nothing_in_any_metric(status: Status) -> None:
    """Gold the empty answer would earn (the first label, `无 。`-like replies, empty report
    sections) gets 0 from a prediction that is not an answer."""
    cases = [
        (LabelPRF(average="macro"), Sample("a", {"task_dataset": "CHIP-CTC"}, "非上述类型")),
        (LabelPRF(average="weighted"), Sample("a", {"task_dataset": "KUAKE-IR"}, "相关")),
        (MicroPRF(), Sample("a", {}, [{"entity": "x", "type": "t"}])),
        (ReplyRouge(), Sample("a", {}, "无。")),
        (ReportRouge(), Sample("a", {}, {"主诉": "无", "诊断": ""})),
    ]
    for metric, sample in cases:
        values, _ = evaluate(metric, [sample], [Prediction("a", answer=None, status=status)])
        assert set(values.values()) == {0.0}, (metric, values)
    report = Sample("a", {}, {"主诉": "无", "诊断": ""})
    stats = ReportRouge().stats([report], [Prediction("a", status=status)])
    assert stats.tolist() == [[0.0, 0.0, 0.0, 2.0]]  # both gold sections count, at 0


def test_scores_follow_a_changed_answer() -> None:
    sample = Sample("a", {}, [{"entity": "x", "type": "t"}])
    pred = Prediction("a", answer=[{"entity": "x", "type": "t"}])
    assert evaluate(MicroPRF(), [sample], [pred])[0]["f1"] == 1.0
    pred.answer = [{"entity": "y", "type": "t"}]
    assert evaluate(MicroPRF(), [sample], [pred])[0]["f1"] == 0.0
    pred.status = Status.INVALID  # one item matching nothing (issue 37)
    assert evaluate(MicroPRF(), [sample], [pred])[1] == {"tp": 0, "fp": 1, "fn": 1}


def test_rouge_of_empty_texts_and_report_sections() -> None:
    samples = [Sample("a", {}, "今天多喝水。")]
    perfect, _ = evaluate(ReplyRouge(), samples, [Prediction("a", answer="今天多喝水。")])
    assert perfect["rougeL"] == pytest.approx(0.999999995, abs=1e-12)
    # an empty reply becomes `无 。`, which shares `。` with the gold: L = F(1/2, 1/6)
    empty, _ = evaluate(ReplyRouge(), samples, [Prediction("a", answer="")])
    assert empty["rougeL"] == pytest.approx(0.25, abs=1e-8)
    both_empty, _ = evaluate(ReplyRouge(), [Sample("b", {}, "")], [Prediction("b", answer="  ")])
    assert both_empty["rougeL"] == pytest.approx(0.999999995, abs=1e-12)  # both become `无 。`
    report = Sample("r", {}, {"主诉": "咳嗽", "诊断": ""})
    values, detail = evaluate(
        ReportRouge(), [report], [Prediction("r", answer={"主诉": "咳嗽", "额外": 1})]
    )
    assert detail == {"section_pairs": 2}
    assert values["rougeL"] == pytest.approx(0.999999995, abs=1e-12)


def test_counter_counts_empty_answers_and_off_schema_items_only() -> None:
    task = {"task_dataset": "CMeEE-V2"}
    samples = [Sample(str(i), task, []) for i in range(4)]
    preds = [
        Prediction("0", answer=[]),
        Prediction("1", answer=[{"entity": "x", "type": "t", "extra": 1}, {"entity": 2}]),
        Prediction("2", answer=None, status=Status.INVALID),
        Prediction("3", status=Status.MISSING),
    ]
    assert cblue_counts(samples, preds) == {"empty_answers": 1, "off_schema_items": 2}
