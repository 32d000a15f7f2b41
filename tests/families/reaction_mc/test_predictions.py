"""Prediction reader `reaction_mc_json`: one object `{question_id: option_index}`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg import BenchregError, load_task, run_task
from benchreg.core.result import RunResult
from benchreg.core.scoring import parse_and_check
from benchreg.core.types import Prediction
from benchreg.families.reaction_mc.predictions import read_predictions

ALL = "all_varying"


@pytest.fixture
def root(question, release) -> Path:
    return release({ALL: [
        question("t_q1", ALL, [{"yield": 80}, {"yield": 40}]),
        question("t_q2", ALL, [{"yield": 90}, {"yield": 30}]),
    ]})


def _run(root: Path, text: str, tmp_path: Path) -> RunResult:
    path = tmp_path / "pred.json"
    path.write_text(text, encoding="utf-8")
    return run_task(
        load_task(f"reaction_mc/{ALL}"),
        view=None,
        system_cfg={"name": "predictions", "path": str(path)},
        roots={"reaction_mc": str(root)},
    )


def test_predictions_file_must_be_an_object(root: Path, tmp_path: Path) -> None:
    with pytest.raises(BenchregError, match="must be a JSON object"):
        _run(root, json.dumps([0, 1]), tmp_path)


def test_malformed_file_names_the_line(root: Path, tmp_path: Path) -> None:
    with pytest.raises(BenchregError, match=r"pred\.json:2: malformed JSON"):
        _run(root, '{"t_q1": 0,\n "t_q2" 1}', tmp_path)


def test_identical_repeat_counts_once(root: Path, tmp_path: Path) -> None:
    result = _run(root, '{"t_q1": 0, "t_q2": 0, "t_q1": 0}', tmp_path)
    assert [p.status for p in result.predictions] == ["ok", "ok"]
    assert result.metrics["exact_match_accuracy"].value == 1.0
    assert not any("conflicting" in note for note in result.system_report.notes)


def test_conflicting_repeat_is_invalid_and_noted(root: Path, tmp_path: Path) -> None:
    # the last value used to win silently (here the best option 0)
    result = _run(root, '{"t_q1": 1, "t_q2": 0, "t_q1": 0}', tmp_path)
    q1, q2 = result.predictions
    assert q1.status == "invalid" and "conflicting duplicate entries" in (q1.detail or "")
    assert q2.status == "ok"
    assert result.statuses["invalid"] == 1
    assert result.per_sample["avg_relative_score"].tolist() == [0.0, 1.0]
    assert (result.metrics["avg_relative_score"].n,
            result.metrics["avg_relative_score"].denominator) == (1, 2)
    assert any("conflicting duplicate predictions" in note and "t_q1" in note
               for note in result.system_report.notes)


def test_equal_in_python_but_different_json_values_conflict(root: Path, tmp_path: Path) -> None:
    result = _run(root, '{"t_q1": 1, "t_q1": true, "t_q2": 0, "t_q2": 0.0}', tmp_path)
    assert [p.status for p in result.predictions] == ["invalid", "invalid"]


def test_unknown_ids_are_reported(root: Path, tmp_path: Path) -> None:
    result = _run(root, '{"t_q1": 0, "x_q9": 1, "x_q9": 2}', tmp_path)
    assert result.system_report.unknown_ids == ["x_q9"]
    assert [p.status for p in result.predictions] == ["ok", "missing"]


def test_text_values_can_be_parsed(root: Path, tmp_path: Path) -> None:
    spec = load_task(f"reaction_mc/{ALL}")
    samples = run_task(spec, view=None, system_cfg={"name": "baseline"},
                       roots={"reaction_mc": str(root)}).samples
    path = tmp_path / "text.json"
    path.write_text(json.dumps({"t_q1": "<think>0 or 1</think>Answer: 1", "t_q2": "0 or 1?"}))
    pset = read_predictions(path, samples, spec.name, text_values="parse")
    preds = [pset.by_id.get(s.id) or Prediction.missing(s.id) for s in samples]
    parse_and_check(spec, samples, preds)
    assert (preds[0].answer, preds[0].status) == (1, "ok")
    assert preds[1].status == "invalid"


def test_text_values_param_is_checked(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text("{}")
    with pytest.raises(BenchregError, match="text_values must be 'invalid' or 'parse'"):
        read_predictions(path, [], "reaction_mc/all_varying", text_values="maybe")
