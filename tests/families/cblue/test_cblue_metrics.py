"""Metric semantics: item comparison, classification averages (vs scikit-learn), caching."""

from __future__ import annotations

import random

import pytest

from benchreg.core.types import Prediction, Sample, Status
from benchreg.families.cblue.metrics import label_prf, micro_prf, reply_rouge, report_rouge
from benchreg.families.cblue.official import label_prf as official_label_prf
from benchreg.families.cblue.official import overlap


def test_items_compare_by_sorted_values_not_key_names() -> None:
    gold = [{"entity": "咳嗽", "type": "症状"}]
    assert overlap(gold, [{"a": "咳嗽", "b": "症状"}]).tp == 1
    assert overlap(gold, [{"type": "症状", "entity": "咳嗽", "x": ""}]).fp == 1
    assert overlap(gold, [{"entity": "咳嗽 ", "type": "症状"}]).tp == 0  # no normalisation


def test_nested_list_order_matters_and_duplicates_count_once() -> None:
    event = {"主体词": "痛", "发生状态": "", "描述词": ["a", "b"], "解剖部位": []}
    swapped = {**event, "描述词": ["b", "a"]}
    assert overlap([event], [swapped]) == (0, 1, 1)
    assert overlap([event, event], [event]) == (1, 0, 0)


def test_micro_scores_zero_without_true_positives_even_when_both_empty() -> None:
    samples = [Sample("a", {}, []), Sample("b", {}, [])]
    preds = [Prediction("a", answer=[]), Prediction("b", answer=[])]
    assert micro_prf(samples, preds).value == 0.0


@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_label_scores_match_scikit_learn_classification_report(average: str) -> None:
    from sklearn.metrics import classification_report

    rng = random.Random(20240123)
    labels = ["甲", "乙", "丙", "丁", "非上述类型", " 甲"]
    for _ in range(200):
        n = rng.randint(1, 30)
        gold = [rng.choice(labels[:4]) for _ in range(n)]
        pred = [rng.choice(labels) for _ in range(n)]
        report = classification_report(gold, pred, output_dict=True, zero_division=0)
        expected = report[f"{average} avg"]
        ours = official_label_prf(list(zip(gold, pred, strict=True)), average)
        assert ours.precision == pytest.approx(expected["precision"], abs=1e-12)
        assert ours.recall == pytest.approx(expected["recall"], abs=1e-12)
        assert ours.f1 == pytest.approx(expected["f1-score"], abs=1e-12)


def test_invalid_and_missing_predictions_score_as_empty_label() -> None:
    samples = [Sample(str(i), {}, g) for i, g in enumerate(["是的", "不是", "是的"])]
    preds = [
        Prediction("0", answer=None, status=Status.INVALID),
        Prediction("1", status=Status.MISSING),
        Prediction("2", answer=""),
    ]
    as_empty = [Prediction(str(i), answer="是的") for i in range(3)]
    params = {"average": "weighted", "empty_label": "是的"}
    assert label_prf(samples, preds, **params).value == label_prf(samples, as_empty, **params).value


def test_cached_parts_follow_a_changed_answer() -> None:
    sample = Sample("a", {}, [{"entity": "x", "type": "t"}])
    pred = Prediction("a", answer=[{"entity": "x", "type": "t"}])
    assert micro_prf([sample], [pred]).value == 1.0
    pred.answer = [{"entity": "y", "type": "t"}]
    assert micro_prf([sample], [pred]).value == 0.0
    pred.status = Status.INVALID
    assert micro_prf([sample], [pred]).detail == {"tp": 0, "fp": 0, "fn": 1}


def test_rouge_of_empty_texts_and_report_sections() -> None:
    samples = [Sample("a", {}, "今天多喝水。")]
    perfect = reply_rouge(samples, [Prediction("a", answer="今天多喝水。")])
    assert perfect.value == pytest.approx(0.999999995, abs=1e-12)
    # an empty reply becomes `无 。`, which shares `。` with the gold: L = F(1/2, 1/6)
    empty = reply_rouge(samples, [Prediction("a", answer="")])
    assert empty.value == pytest.approx(0.25, abs=1e-8)
    both_empty = reply_rouge([Sample("b", {}, "")], [Prediction("b", answer="  ")])
    assert both_empty.value == pytest.approx(0.999999995, abs=1e-12)  # both become `无 。`
    report = Sample("r", {}, {"主诉": "咳嗽", "诊断": ""})
    result = report_rouge([report], [Prediction("r", answer={"主诉": "咳嗽", "额外": 1})])
    assert result.detail == {"section_pairs": 2}
    assert result.value == pytest.approx(0.999999995, abs=1e-12)
