"""Scoring rules of the spec, one test each: missing, invalid, out of range, duplicates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg import BenchregError, load_task, run_task


def score(root: Path, lines: list[dict] | list[str], tmp_path: Path, view: str = "correct"):
    path = tmp_path / "pred.jsonl"
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return run_task(
        load_task("molp2s/gap"),
        view=view,
        system_cfg={"name": "predictions", "path": str(path)},
        roots={"molp2s": str(root)},
    )


def test_all_correct(release, tmp_path: Path) -> None:
    lines = [{"record_id": f"r{i}", "selected_candidate_index": i % 4} for i in range(6)]
    result = score(release(), lines, tmp_path)
    assert result.metrics["accuracy"].value == 1.0
    assert result.counts == {"hits": 6, "tasks": 6, "missing": 0, "invalid": 0, "out_of_range": 0}


def test_missing_record_is_incorrect_and_counted(release, tmp_path: Path) -> None:
    lines = [{"record_id": f"r{i}", "selected_candidate_index": i % 4} for i in range(4)]
    result = score(release(), lines, tmp_path)
    assert result.counts["missing"] == 2
    assert result.metrics["accuracy"].value == pytest.approx(4 / 6)
    assert result.metrics["accuracy"].denominator == 6


def test_invalid_line_is_incorrect_and_counted(release, tmp_path: Path) -> None:
    lines = [{"record_id": "r0", "invalid": True}] + [
        {"record_id": f"r{i}", "selected_candidate_index": i % 4} for i in range(1, 6)
    ]
    result = score(release(), lines, tmp_path)
    assert result.counts["invalid"] == 1
    assert result.counts["hits"] == 5


@pytest.mark.parametrize("bad", [4, -1, 99])
def test_out_of_range_index_is_incorrect_and_counted(release, tmp_path: Path, bad: int) -> None:
    lines = [{"record_id": "r0", "selected_candidate_index": bad}]
    result = score(release(), lines, tmp_path)
    assert result.counts == {"hits": 0, "tasks": 6, "missing": 5, "invalid": 0, "out_of_range": 1}


@pytest.mark.parametrize("bad", ["0", 1.5, True, None])
def test_wrong_typed_index_is_invalid(release, tmp_path: Path, bad: object) -> None:
    lines = [{"record_id": "r0", "selected_candidate_index": bad}]
    result = score(release(), lines, tmp_path)
    assert result.counts["invalid"] == 1
    assert result.counts["hits"] == 0


def test_duplicate_record_id_rejects_the_file(release, tmp_path: Path) -> None:
    lines = [
        {"record_id": "r0", "selected_candidate_index": 0},
        {"record_id": "r1", "selected_candidate_index": 1},
        {"record_id": "r0", "selected_candidate_index": 1},
    ]
    with pytest.raises(BenchregError, match=r"pred\.jsonl:3: duplicate record_id 'r0'"):
        score(release(), lines, tmp_path)


def test_unknown_record_is_ignored_not_scored(release, tmp_path: Path) -> None:
    lines = [{"record_id": "ghost", "selected_candidate_index": 0}]
    result = score(release(), lines, tmp_path)
    assert result.prediction_set is not None
    assert result.prediction_set.unknown_ids == ["ghost"]
    assert result.counts["missing"] == 6


def test_text_output_is_parsed(release, tmp_path: Path) -> None:
    text = 'Reasoning first.\n```json\n{"record_id": "r1", "selected_candidate_index": 1}\n```'
    lines = [{"record_id": "r1", "output": text}, {"record_id": "r2", "output": "no idea"}]
    result = score(release(), lines, tmp_path)
    by_id = {p.sample_id: p for p in result.predictions}
    assert by_id["r1"].answer == 1 and by_id["r1"].status == "ok"
    assert by_id["r2"].status == "invalid"


def test_non_object_line_is_rejected(release, tmp_path: Path) -> None:
    with pytest.raises(BenchregError, match=r"pred\.jsonl:1: a prediction line must be"):
        score(release(), ["[1, 2]"], tmp_path)


def test_accuracy_has_wilson_ci(release, tmp_path: Path) -> None:
    lines = [{"record_id": f"r{i}", "selected_candidate_index": 0} for i in range(6)]
    accuracy = score(release(), lines, tmp_path).metrics["accuracy"]
    assert accuracy.ci_method == "wilson"
    assert accuracy.ci95 is not None
    assert accuracy.ci95[0] < accuracy.value < accuracy.ci95[1]
