"""The prediction reader: where the official scorer aborts, we score (one test per tolerance rule).

A wrong-typed, missing or malformed answer makes that one sample invalid or missing (counted,
scored as wrong: never as the empty answer, which can earn credit); a results file lacking a task
or samples, or naming unknown ids, is reported with the exact ids. Expected numbers come from the
reference score files wherever possible.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.types import Status
from benchreg.families.cblue.catalogue import TASK_NAMES, TASKS

from .cblue_helpers import (
    assert_scores,
    load_json,
    reference_scores,
    run_cblue,
    score_all,
    scores_of,
    write_json,
    write_jsonl,
)

WRONG_TYPES: dict[str, Any] = {
    "extraction": ["not a list", None, {"entity": "x", "type": "y"}, [["a", "b"]], ["x"], 3],
    "classification": [None, 1, ["是的"], {"label": "是的"}, True],
    "reply": [None, ["回复"], {"text": "回复"}, 0],
    "report": [None, ["主诉：咳嗽"], 5, {"主诉": 1}, {"诊断": None}],
}


def zeros(result: Any) -> dict[str, float]:
    return dict.fromkeys(scores_of(result), 0.0)


def test_wrong_typed_answers_are_invalid_and_scored_as_wrong(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    """Every answer wrong-typed: nothing aborts, every sample is invalid, every score is 0 (the
    empty set scores CHIP-CTC and IMCS-V2-DAC 1.0 on this split; wrong types must not)."""
    data = load_json(reference / "perfect.json")
    for task, entries in data.items():
        wrong = WRONG_TYPES[TASKS[task].kind]
        for index, entry in enumerate(entries):
            entry["answer"] = wrong[index % len(wrong)]
    results = score_all(write_json(tmp_path / "wrong.json", data), raw)
    for task, result in results.items():
        assert result.statuses["invalid"] == 5, task
        assert all(p.status is Status.INVALID and p.detail for p in result.predictions)
        assert scores_of(result) == zeros(result), task
    assert reference_scores(reference, "empty", "CHIP-CTC")["macro-f1"] == 1.0


def test_one_wrong_typed_answer_invalidates_only_its_sample(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    """drop_last with one CMeEE-V2 answer broken scores as drop_last with that answer replaced by
    one item that matches nothing (issue 37: an invalid answer never beats a wrong one)."""
    data = load_json(reference / "perturb_drop_last.json")
    emptied = copy.deepcopy(data)
    data["CMeEE-V2"][1]["answer"] = {"entity": "穿刺"}
    emptied["CMeEE-V2"][1]["answer"] = [{"entity": "WRONG", "type": "WRONG"}]
    broken = run_cblue("CMeEE-V2", write_json(tmp_path / "broken.json", data), raw)
    same = run_cblue("CMeEE-V2", write_json(tmp_path / "emptied.json", emptied), raw)
    assert broken.statuses["invalid"] == 1 and broken.statuses["ok"] == 4
    assert scores_of(broken) == scores_of(same)
    assert scores_of(broken) != {k: 0.0 for k in scores_of(broken)}


def test_missing_task_makes_all_its_samples_missing(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    data = load_json(reference / "perfect.json")
    del data["KUAKE-QTR"]
    path = write_json(tmp_path / "no_qtr.json", data)
    result = run_cblue("KUAKE-QTR", path, raw)
    assert result.statuses["missing"] == 5
    assert any("task KUAKE-QTR is not in no_qtr.json" in n for n in result.system_report.notes)
    assert scores_of(result) == zeros(result)  # not the empty set's 0.0667
    assert_scores(
        run_cblue("CHIP-STS", path, raw), reference_scores(reference, "perfect", "CHIP-STS")
    )


def test_missing_samples_are_named_and_scored_as_wrong(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    data = load_json(reference / "perfect.json")
    for entries in data.values():
        entries.clear()
    path = write_json(tmp_path / "no_samples.json", data)
    gold = load_json(raw / "dev_structured.json")
    for task in TASK_NAMES:
        result = run_cblue(task, path, raw)
        assert result.statuses["missing"] == 5
        ids = [e["sample_id"] for e in gold[task]]
        assert [p.sample_id for p in result.predictions if p.status is Status.MISSING] == ids
        assert result.system_report.notes[0] == (
            f"{task}: none of the 5 samples has a prediction in no_samples.json "
            "(a file for another task or split?)"
        )
        assert scores_of(result) == zeros(result), task


def test_unknown_sample_ids_are_reported_and_ignored(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    data = load_json(reference / "perfect.json")
    data["CHIP-CTC"].append({"sample_id": "dev-does-not-exist", "answer": "疾病"})
    data["CHIP-CTC"].append({"sample_id": "dev-neither", "answer": "年龄"})
    result = run_cblue("CHIP-CTC", write_json(tmp_path / "extra.json", data), raw)
    assert result.system_report.unknown_ids == ["dev-does-not-exist", "dev-neither"]
    assert len(result.system_report.unknown_ids) == 2
    assert_scores(result, reference_scores(reference, "perfect", "CHIP-CTC"))


def test_malformed_entries_are_reported_and_their_samples_missing(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    data = load_json(reference / "perfect.json")
    entries = data["CHIP-CDN"]
    entries[0] = "dev-1506"
    entries[1] = {"id": entries[1]["sample_id"], "answer": entries[1]["answer"]}
    del entries[2]["answer"]
    result = run_cblue("CHIP-CDN", write_json(tmp_path / "malformed.json", data), raw)
    assert any("CHIP-CDN[0], CHIP-CDN[1]" in n for n in result.system_report.notes)
    statuses = [p.status for p in result.predictions]
    assert statuses[:3] == [Status.MISSING, Status.MISSING, Status.INVALID]
    assert result.predictions[2].detail == "entry has no answer"


def test_duplicates_identical_are_harmless_conflicting_are_invalid(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    data = load_json(reference / "perfect.json")
    data["KUAKE-IR"].append(copy.deepcopy(data["KUAKE-IR"][0]))
    same = run_cblue("KUAKE-IR", write_json(tmp_path / "dup.json", data), raw)
    assert same.statuses["ok"] == 5
    assert_scores(same, reference_scores(reference, "perfect", "KUAKE-IR"))
    data["KUAKE-IR"].append({"sample_id": data["KUAKE-IR"][0]["sample_id"], "answer": "相关"})
    clash = run_cblue("KUAKE-IR", write_json(tmp_path / "clash.json", data), raw)
    assert clash.statuses["invalid"] == 1
    assert clash.predictions[0].detail == "conflicting duplicate entries (KUAKE-IR[0], KUAKE-IR[6])"


def test_cmeie_v2_alias_in_results_and_data(raw: Path, reference: Path, tmp_path: Path) -> None:
    data = load_json(reference / "perturb_drop_last.json")
    data["CMeIE-V2"] = data.pop("CMeIE")
    path = write_json(tmp_path / "v2.json", data)
    expected = reference_scores(reference, "perturb_drop_last", "CMeIE")
    assert_scores(run_cblue("CMeIE", path, raw), expected)
    renamed = (raw / "dev.json").read_text("utf-8").replace('"CMeIE"', '"CMeIE-V2"')
    (tmp_path / "dev.json").write_text(renamed, encoding="utf-8")
    gold = load_json(raw / "dev_structured.json")
    gold["CMeIE-V2"] = gold.pop("CMeIE")
    write_json(tmp_path / "dev_structured.json", gold)
    result = run_cblue("CMeIE", path, tmp_path)
    assert result.dataset.info["gold_from_structured"] == 5
    assert_scores(result, expected)


def test_text_rows_sample_id_output_and_other_tasks(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    rows = [
        {"sample_id": r["sample_id"], "output": r["target"], "task_dataset": r["task_dataset"]}
        for r in map(json.loads, (raw / "dev.json").read_text("utf-8").splitlines())
    ]
    path = write_jsonl(tmp_path / "out.jsonl", rows)
    result = run_cblue("CMeEE-V2", path, raw)
    assert result.statuses["ok"] == 5 and result.system_report.unknown_ids == []
    assert_scores(result, reference_scores(reference, "parsed_from_text", "CMeEE-V2"))
    mine = [r for r in rows if r["task_dataset"] == "MedDG"]
    for row in mine:
        del row["task_dataset"]
    mine[0]["output"] = None
    mine.append({"sample_id": "dev-unknown", "output": "你好"})
    result = run_cblue("MedDG", write_jsonl(tmp_path / "meddg.jsonl", mine), raw)
    assert result.statuses["invalid"] == 1 and result.statuses["ok"] == 4
    assert result.system_report.unknown_ids == ["dev-unknown"]


def test_jsonl_rows_may_carry_structured_answers(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    rows = [
        {"sample_id": e["sample_id"], "answer": e["answer"], "task_dataset": task}
        for task, entries in load_json(reference / "perturb_drop_last.json").items()
        for e in entries
    ]
    path = write_jsonl(tmp_path / "answers.jsonl", rows)
    assert_scores(
        run_cblue("CHIP-CDEE", path, raw),
        reference_scores(reference, "perturb_drop_last", "CHIP-CDEE"),
    )


def test_a_file_that_is_not_json_is_one_clear_error(raw: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("{not json\nnor this\n", encoding="utf-8")
    with pytest.raises(BenchregError, match=r"bad.jsonl:1: malformed JSON"):
        run_cblue("MedDG", path, raw)


def test_a_malformed_line_is_reported_and_the_rest_scored(raw: Path, tmp_path: Path) -> None:
    gold = load_json(raw / "dev_structured.json")["MedDG"]
    lines = [json.dumps({"sample_id": e["sample_id"], "output": e["answer"]}) for e in gold[1:]]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(["{not json", *lines]) + "\n", encoding="utf-8")
    result = run_cblue("MedDG", path, raw)
    assert result.statuses["ok"] == 4 and result.statuses["missing"] == 1
    assert any(f"{path}:1" in note and "malformed" in note for note in result.system_report.notes)


def test_task_entry_that_is_not_a_list_invalidates_the_task(raw: Path, tmp_path: Path) -> None:
    path = write_json(tmp_path / "odd.json", {"CHIP-CTC": "非上述类型", "KUAKE-IR": []})
    result = run_cblue("CHIP-CTC", path, raw)
    assert result.statuses["invalid"] == 5
