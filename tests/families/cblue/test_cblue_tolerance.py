"""Where the official scorer aborts, we score: one test per tolerance rule.

A wrong-typed, missing or malformed answer makes that one sample invalid (counted, scored as the
empty answer); a results file lacking a task or samples, or naming unknown ids, is reported with
the exact ids. Expected numbers come from the reference score files wherever possible.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cblue_helpers import load_json, run_cblue, score_all, scores_of, write_json, write_jsonl

from benchreg.core.errors import BenchregError
from benchreg.core.types import Status
from benchreg.families.cblue.catalogue import TASK_NAMES, TASKS

TOL = 1e-9
WRONG_TYPES: dict[str, Any] = {
    "extraction": ["not a list", None, {"entity": "x", "type": "y"}, [["a", "b"]], ["x"], 3],
    "classification": [None, 1, ["是的"], {"label": "是的"}, True],
    "reply": [None, ["回复"], {"text": "回复"}, 0],
    "report": [None, ["主诉：咳嗽"], 5, {"主诉": 1}, {"诊断": None}],
}


def reference_scores(reference: Path, name: str, task: str) -> dict[str, float]:
    return load_json(reference / f"{name}.scores.json")["tasks"][task]["scores"]


def assert_scores(result: Any, expected: dict[str, float]) -> None:
    ours = scores_of(result)
    for name, value in expected.items():
        assert ours[name] == pytest.approx(value, abs=TOL), name


def test_wrong_typed_answers_are_invalid_and_scored_as_empty(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    """Every answer wrong-typed: nothing aborts, every sample is invalid, scores = empty set's."""
    data = load_json(reference / "perfect.json")
    for task, entries in data.items():
        wrong = WRONG_TYPES[TASKS[task].kind]
        for index, entry in enumerate(entries):
            entry["answer"] = wrong[index % len(wrong)]
    results = score_all(write_json(tmp_path / "wrong.json", data), raw)
    for task, result in results.items():
        assert result.counts["invalid"] == 5, task
        assert all(p.status is Status.INVALID and p.detail for p in result.predictions)
        assert_scores(result, reference_scores(reference, "empty", task))


def test_one_wrong_typed_answer_invalidates_only_its_sample(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    """drop_last with one CMeEE-V2 answer broken scores as drop_last with that answer emptied."""
    data = load_json(reference / "perturb_drop_last.json")
    emptied = copy.deepcopy(data)
    data["CMeEE-V2"][1]["answer"] = {"entity": "穿刺"}
    emptied["CMeEE-V2"][1]["answer"] = []
    broken = run_cblue("CMeEE-V2", write_json(tmp_path / "broken.json", data), raw)
    same = run_cblue("CMeEE-V2", write_json(tmp_path / "emptied.json", emptied), raw)
    assert broken.counts["invalid"] == 1 and broken.counts["ok"] == 4
    assert scores_of(broken) == scores_of(same)
    assert scores_of(broken) != {k: 0.0 for k in scores_of(broken)}


def test_missing_task_makes_all_its_samples_missing(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    data = load_json(reference / "perfect.json")
    del data["KUAKE-QTR"]
    path = write_json(tmp_path / "no_qtr.json", data)
    result = run_cblue("KUAKE-QTR", path, raw)
    assert result.counts["missing"] == 5
    assert result.prediction_set is not None
    assert any("task KUAKE-QTR is not in no_qtr.json" in n for n in result.prediction_set.notes)
    assert_scores(result, reference_scores(reference, "empty", "KUAKE-QTR"))
    assert_scores(
        run_cblue("CHIP-STS", path, raw), reference_scores(reference, "perfect", "CHIP-STS")
    )


def test_missing_samples_are_named_and_scored_as_empty(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    data = load_json(reference / "perfect.json")
    for entries in data.values():
        entries.clear()
    path = write_json(tmp_path / "no_samples.json", data)
    gold = load_json(raw / "dev_structured.json")
    for task in TASK_NAMES:
        result = run_cblue(task, path, raw)
        assert result.counts["missing"] == 5
        ids = [e["sample_id"] for e in gold[task]]
        assert result.prediction_set is not None
        assert f"5 sample(s) have no prediction: {', '.join(ids)}" in result.prediction_set.notes[0]
        assert_scores(result, reference_scores(reference, "empty", task))


def test_unknown_sample_ids_are_reported_and_ignored(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    data = load_json(reference / "perfect.json")
    data["CHIP-CTC"].append({"sample_id": "dev-does-not-exist", "answer": "疾病"})
    data["CHIP-CTC"].append({"sample_id": "dev-neither", "answer": "年龄"})
    result = run_cblue("CHIP-CTC", write_json(tmp_path / "extra.json", data), raw)
    assert result.prediction_set is not None
    assert result.prediction_set.unknown_ids == ["dev-does-not-exist", "dev-neither"]
    assert result.counts["unknown_ids"] == 2
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
    assert result.prediction_set is not None
    assert any("CHIP-CDN[0], CHIP-CDN[1]" in n for n in result.prediction_set.notes)
    statuses = [p.status for p in result.predictions]
    assert statuses[:3] == [Status.MISSING, Status.MISSING, Status.INVALID]
    assert result.predictions[2].detail == "entry has no answer"


def test_duplicates_identical_are_harmless_conflicting_are_invalid(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    data = load_json(reference / "perfect.json")
    data["KUAKE-IR"].append(copy.deepcopy(data["KUAKE-IR"][0]))
    same = run_cblue("KUAKE-IR", write_json(tmp_path / "dup.json", data), raw)
    assert same.counts["ok"] == 5
    assert_scores(same, reference_scores(reference, "perfect", "KUAKE-IR"))
    data["KUAKE-IR"].append({"sample_id": data["KUAKE-IR"][0]["sample_id"], "answer": "相关"})
    clash = run_cblue("KUAKE-IR", write_json(tmp_path / "clash.json", data), raw)
    assert clash.counts["invalid"] == 1
    assert clash.predictions[0].detail == "conflicting duplicate entries"


def test_empty_label_counts_as_the_tasks_first_official_label(raw: Path, tmp_path: Path) -> None:
    gold = load_json(raw / "dev_structured.json")
    ids = [e["sample_id"] for e in gold["CHIP-STS"]]
    empty = write_json(
        tmp_path / "e.json", {"CHIP-STS": [{"sample_id": i, "answer": ""} for i in ids]}
    )
    first = write_json(
        tmp_path / "f.json", {"CHIP-STS": [{"sample_id": i, "answer": "是的"} for i in ids]}
    )
    assert scores_of(run_cblue("CHIP-STS", empty, raw)) == scores_of(
        run_cblue("CHIP-STS", first, raw)
    )


def test_unknown_label_is_out_of_range_but_scored_as_given(raw: Path, tmp_path: Path) -> None:
    """As the official evaluator does, an unknown label adds a class to the macro average."""
    gold = load_json(raw / "dev_structured.json")["IMCS-V2-DAC"]
    answers = [{"sample_id": e["sample_id"], "answer": e["answer"]} for e in gold]
    answers[0]["answer"] = "随便说说"
    result = run_cblue(
        "IMCS-V2-DAC", write_json(tmp_path / "dac.json", {"IMCS-V2-DAC": answers}), raw
    )
    assert result.counts["out_of_range"] == 1
    # classes {非上述类型: P=1, R=4/5, F1=8/9; 随便说说: 0, 0, 0} -> macro-f1 = 4/9
    assert scores_of(result)["macro-f1"] == pytest.approx(4 / 9, abs=TOL)


def test_report_string_is_split_into_sections(raw: Path, reference: Path, tmp_path: Path) -> None:
    data = load_json(reference / "perfect.json")
    for entry in data["IMCS-V2-MRG"]:
        entry["answer"] = "\n".join(f"{k}：{v}" for k, v in entry["answer"].items())
    result = run_cblue("IMCS-V2-MRG", write_json(tmp_path / "mrg.json", data), raw)
    assert result.counts["ok"] == 5
    assert isinstance(result.predictions[0].answer, dict)
    assert_scores(result, reference_scores(reference, "perfect", "IMCS-V2-MRG"))


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
    assert result.counts["ok"] == 5 and result.counts["unknown_ids"] == 0
    assert_scores(result, reference_scores(reference, "parsed_from_text", "CMeEE-V2"))
    mine = [r for r in rows if r["task_dataset"] == "MedDG"]
    for row in mine:
        del row["task_dataset"]
    mine[0]["output"] = None
    mine.append({"sample_id": "dev-unknown", "output": "你好"})
    result = run_cblue("MedDG", write_jsonl(tmp_path / "meddg.jsonl", mine), raw)
    assert result.counts["invalid"] == 1 and result.counts["ok"] == 4
    assert result.prediction_set is not None
    assert result.prediction_set.unknown_ids == ["dev-unknown"]


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
    path.write_text('{"sample_id": "a", "output": "x"}\n{not json\n', encoding="utf-8")
    with pytest.raises(BenchregError, match=r"bad.jsonl:2: malformed JSON"):
        run_cblue("MedDG", path, raw)


def test_task_entry_that_is_not_a_list_invalidates_the_task(raw: Path, tmp_path: Path) -> None:
    path = write_json(tmp_path / "odd.json", {"CHIP-CTC": "非上述类型", "KUAKE-IR": []})
    result = run_cblue("CHIP-CTC", path, raw)
    assert result.counts["invalid"] == 5
