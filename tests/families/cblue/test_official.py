"""The official semantics (official.py) and score parity with the official PromptCBLUE evaluator
on every reference prediction set.

Expected numbers come from ../shared/data/promptcblue/reference/*.scores.json (computed by the
unmodified official code); every task's P/R/F1 or ROUGE-1/2/L and the 16-task overall must agree
within 1e-9.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg import load_task
from benchreg.families.cblue.catalogue import TASK_NAMES
from benchreg.families.cblue.official import overlap

from .cblue_helpers import load_json, primary_of, score_all, scores_of

TOL = 1e-9
REFERENCE_SETS = [
    "perfect",
    "empty",
    "parsed_from_text",
    "perturb_drop_last",
    "perturb_cls_relabel",
]


def assert_matches_reference(results: dict, expected: dict) -> None:
    for task in TASK_NAMES:
        ours = scores_of(results[task])
        for name, value in expected["tasks"][task]["scores"].items():
            assert ours[name] == pytest.approx(value, abs=TOL), (task, name)
        assert expected["tasks"][task]["primary_metric"] == results[task].primary
    overall = sum(primary_of(results[t]) for t in TASK_NAMES) / len(TASK_NAMES)
    assert overall == pytest.approx(expected["overall_16"], abs=TOL)
    assert sum(primary_of(results[t]) for t in TASK_NAMES) == pytest.approx(
        expected["sum_primary_16"], abs=TOL
    )


@pytest.mark.parametrize("name", REFERENCE_SETS)
def test_structured_reference_sets(name: str, raw: Path, reference: Path) -> None:
    expected = load_json(reference / f"{name}.scores.json")
    results = score_all(reference / f"{name}.json", raw)
    assert_matches_reference(results, expected)
    for result in results.values():
        assert result.statuses["missing"] == result.statuses["invalid"] == 0
        assert result.system_report.unknown_ids == []


def test_text_predictions_score_like_official_post_processing(raw: Path, reference: Path) -> None:
    """dev.json as text predictions (its targets are the gold text) = official parse + score."""
    expected = load_json(reference / "parsed_from_text.scores.json")
    assert_matches_reference(score_all(raw / "dev.json", raw), expected)


def test_gold_parsed_from_target_when_no_structured_file(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    """Without dev_structured.json, gold comes from parsing `target`; scores stay official."""
    (tmp_path / "dev.json").write_bytes((raw / "dev.json").read_bytes())
    expected = load_json(reference / "perturb_drop_last.scores.json")
    results = score_all(reference / "perturb_drop_last.json", tmp_path)
    assert_matches_reference(results, expected)
    assert all(r.dataset.info["gold_from_target"] == 5 for r in results.values())


def test_official_key_names_for_every_task(reference: Path) -> None:
    expected = load_json(reference / "perfect.scores.json")
    for task in TASK_NAMES:
        labels = [name for b in load_task(f"cblue/{task}").metrics for name in b.names]
        assert sorted(labels) == sorted(expected["tasks"][task]["scores"]), task


# --- official semantics (official.py) --------------------------------------------------------


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
