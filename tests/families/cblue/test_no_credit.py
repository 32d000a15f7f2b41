"""Wrong types and unreadable text never earn credit (issue 19, item 4), on every one of the 16
PromptCBLUE tasks of the catalogue.

Before, an answer of the wrong type (and model text that yields no answer) was scored as the
task's empty answer, which counts as the first official label for classification (so it scored
whenever that label was the gold: CHIP-CTC 1.0 on a file the official scorer refuses) and as
`无 。` for replies and report sections. Now it is `invalid` and scores as wrong. A genuinely empty
answer of the right type (`[]`, `""`, `{}`, a task's explicit empty text) stays `ok` and keeps the
official empty semantics (the parity tests in test_official.py hold the numbers).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchreg import RunResult
from benchreg.core.types import Sample, Status
from benchreg.families.cblue.catalogue import TASK_NAMES, TASKS, lookup
from benchreg.families.cblue.formats import render_target

from .cblue_helpers import evaluate, load_json, run_cblue, scores_of, write_json, write_jsonl

SAMPLE_DIR = Path(__file__).resolve().parents[3] / "benchreg" / "families" / "cblue" / "sample"
GOLD: dict[str, list[dict[str, Any]]] = load_json(SAMPLE_DIR / "dev_structured.json")
ROWS: list[dict[str, Any]] = [
    json.loads(line) for line in (SAMPLE_DIR / "dev.json").read_text("utf-8").splitlines() if line
]

# Per answer kind, answers of the wrong type; several carry the right content in the wrong shape.
WRONG_TYPES: dict[str, list[Any]] = {
    "extraction": [
        "疾病实体：发热",  # the answer text where the structured list belongs
        None,
        {"entity": "发热", "type": "临床表现"},  # one item, not a list of items
        [["发热", "临床表现"]],
        ["发热"],
        3,
        True,
    ],
    "classification": [None, 0, 1.5, True, ["<gold>"], {"label": "<gold>"}],
    "reply": [None, 0, ["<gold>"], {"reply": "<gold>"}],
    "report": [None, 5, ["<gold>"], {"主诉": 1}, {"诊断": None}, "患儿咳嗽三天，无发热。"],
}
PLANTED = [
    pytest.param(task, index, id=f"{task}-{index}")
    for task in TASK_NAMES
    for index in range(len(WRONG_TYPES[TASKS[task].kind]))
]


def planted_index(task: str) -> int:
    """The sample to plant on: for classification one whose gold is the task's first official
    label, the label the empty answer counts as (the case that used to score)."""
    info = TASKS[task]
    if info.kind == "classification":
        golds = [e["answer"] for e in GOLD[task]]
        assert info.empty_label in golds, task  # the embedded sample has one per task
        return golds.index(info.empty_label)
    return 0


def wrong_value(task: str, index: int, gold: Any) -> Any:
    value = WRONG_TYPES[TASKS[task].kind][index]
    return json.loads(json.dumps(value).replace('"<gold>"', json.dumps(gold, ensure_ascii=False)))


def results_file(tmp_path: Path, task: str, answers: dict[int, Any]) -> Path:
    """The embedded sample's gold as a results.json, with ``answers`` (position -> answer)."""
    entries = [dict(e) for e in GOLD[task]]
    for position, answer in answers.items():
        entries[position]["answer"] = answer
    return write_json(tmp_path / f"{task}.json", {task: entries})


def credit_of(result: RunResult, position: int) -> dict[str, float]:
    """What one sample alone earns from every metric of the task."""
    sample, pred = result.samples[position], result.predictions[position]
    credit: dict[str, float] = {}
    for bound in result.task.metrics:
        values, _ = evaluate(bound.metric, [sample], [pred])
        credit.update(values)
    return credit


def primary(result: RunResult) -> float:
    return result.metrics[result.primary].value


@pytest.fixture(scope="module")
def perfect(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    folder = tmp_path_factory.mktemp("perfect")
    return {task: run_cblue(task, results_file(folder, task, {}), None) for task in TASK_NAMES}


@pytest.mark.parametrize(("task", "index"), PLANTED)
def test_a_planted_wrong_type_is_invalid_and_scores_zero(
    task: str, index: int, tmp_path: Path, perfect: dict[str, RunResult]
) -> None:
    position = planted_index(task)
    gold = GOLD[task][position]["answer"]
    planted = results_file(tmp_path, task, {position: wrong_value(task, index, gold)})
    result = run_cblue(task, planted, None)
    pred = result.predictions[position]
    assert pred.status is Status.INVALID and pred.detail, (task, pred)
    assert result.statuses["invalid"] == 1 and result.statuses["ok"] == len(result.samples) - 1
    assert set(credit_of(result, position).values()) == {0.0}, task
    assert primary(result) < primary(perfect[task]), task  # the planted sample lost its credit


@pytest.mark.parametrize("task", TASK_NAMES)
def test_every_answer_wrong_typed_scores_zero_in_every_metric(task: str, tmp_path: Path) -> None:
    answers = {
        i: wrong_value(task, i % len(WRONG_TYPES[TASKS[task].kind]), e["answer"])
        for i, e in enumerate(GOLD[task])
    }
    result = run_cblue(task, results_file(tmp_path, task, answers), None)
    assert result.statuses["invalid"] == len(result.samples)
    assert set(scores_of(result).values()) == {0.0}, scores_of(result)
    assert result.counts["empty_answers"] == 0


@pytest.mark.parametrize("task", ["CHIP-CTC", "IMCS-V2-DAC"])
def test_the_issue_case_wrong_types_no_longer_score_one_on_the_toy_dev(
    task: str, raw: Path, tmp_path: Path
) -> None:
    """All toy dev gold labels are 非上述类型: the empty answer scores 1.0 there (officially),
    a number label (which the official scorer refuses) scored 1.0 too, and now scores 0."""
    ids = [e["sample_id"] for e in load_json(raw / "dev_structured.json")[task]]
    empty = write_json(tmp_path / "e.json", {task: [{"sample_id": i, "answer": ""} for i in ids]})
    wrong = write_json(tmp_path / "w.json", {task: [{"sample_id": i, "answer": 0} for i in ids]})
    assert scores_of(run_cblue(task, empty, raw))["macro-f1"] == 1.0
    result = run_cblue(task, wrong, raw)
    assert result.statuses["invalid"] == 5 and scores_of(result)["macro-f1"] == 0.0


# --- model text -----------------------------------------------------------------------------------


def text_rows(task: str, outputs: dict[int, str]) -> list[dict[str, Any]]:
    """The embedded sample's gold rendered as model text, with ``outputs`` (position -> text)."""
    mine = [r for r in ROWS if lookup(r["task_dataset"]) is TASKS[task]]
    gold = {e["sample_id"]: e["answer"] for e in GOLD[task]}
    out = []
    for position, row in enumerate(mine):
        text = render_target(task, gold[row["sample_id"]], row["answer_choices"])
        out.append({"sample_id": row["sample_id"], "output": outputs.get(position, text)})
    return out


NO_ANSWER_TEXT = ["", "   \n", "抱歉，我无法回答这个问题。"]


@pytest.mark.parametrize("text", NO_ANSWER_TEXT, ids=["empty", "blank", "prose"])
@pytest.mark.parametrize("task", TASK_NAMES)
def test_text_that_yields_no_answer_is_invalid_and_scores_zero(
    task: str, text: str, tmp_path: Path
) -> None:
    info = TASKS[task]
    position = planted_index(task)
    rows = text_rows(task, {position: text})
    result = run_cblue(task, write_jsonl(tmp_path / "out.jsonl", rows), None)
    pred = result.predictions[position]
    if text.strip() and info.kind in ("classification", "reply"):
        # prose is a label outside the task's labels (scored as given: it matches no gold) or a
        # reply; either way it is an answer, not "no answer"
        expected = Status.OUT_OF_RANGE if info.kind == "classification" else Status.OK
        assert pred.status is expected, (task, pred)
        if info.kind == "classification":
            assert set(credit_of(result, position).values()) == {0.0}
        return
    assert pred.status is Status.INVALID, (task, pred)
    assert pred.detail and "unparseable" in pred.detail
    assert set(credit_of(result, position).values()) == {0.0}, task
    others = [p for i, p in enumerate(result.predictions) if i != position]
    assert all(p.status is Status.OK for p in others), task


EXPLICIT_EMPTY = {
    # {choice}: the sample's first answer choice (an entity type, a relation)
    "CMeEE-V2": ["上述句子没有指定类型实体", "上述句子中的实体包含：\n{choice}实体："],
    "IMCS-V2-NER": ["上述句子没有指定类型实体", "上述句子中的实体包含：\n{choice}实体："],
    "CMeIE": ["没有指定类型的三元组", "具有{choice}关系的头尾实体对如下："],
    "CHIP-CDN": ["没有对应的标准化实体"],
    "CHIP-CDEE": ["上述句子中的临床发现事件如下："],
    "CHIP-MDCFNPC": ["上述对话中临床发现实体以及其阴阳性判别如下："],
    "IMCS-V2-SR": ["当前对话中的症状及其阴阳性判断为："],
    "IMCS-V2-MRG": ["上述问诊对话的诊疗报告如下："],
}


@pytest.mark.parametrize(
    ("task", "text"), [(t, x) for t, texts in EXPLICIT_EMPTY.items() for x in texts]
)
def test_an_explicit_empty_answer_in_text_is_ok_and_empty(
    task: str, text: str, tmp_path: Path
) -> None:
    first = next(r for r in ROWS if lookup(r["task_dataset"]) is TASKS[task])
    text = text.replace("{choice}", str((first["answer_choices"] or [""])[0]))
    result = run_cblue(task, write_jsonl(tmp_path / "out.jsonl", text_rows(task, {0: text})), None)
    pred = result.predictions[0]
    assert pred.status is Status.OK and pred.answer in ([], {}), (task, pred)
    assert result.statuses["invalid"] == 0


@pytest.mark.parametrize("task", TASK_NAMES)
def test_a_genuinely_empty_structured_answer_stays_ok(task: str, tmp_path: Path) -> None:
    empty = TASKS[task].empty_answer()
    result = run_cblue(task, results_file(tmp_path, task, {0: empty}), None)
    assert result.predictions[0].status is Status.OK and result.predictions[0].answer == empty
    assert result.statuses["invalid"] == 0 and result.counts["empty_answers"] >= 1


def test_gold_text_without_an_answer_is_the_official_empty_gold(tmp_path: Path) -> None:
    """A test split (every target empty) still loads: the parsers' NoAnswer carries the
    official reading, which is the gold."""
    rows = [dict(r, target="") for r in ROWS]
    write_jsonl(tmp_path / "test.json", rows)
    for task in TASK_NAMES:
        result = run_cblue(task, None, tmp_path, view="test", system="baseline")
        assert [s.gold for s in result.samples] == [TASKS[task].empty_answer()] * 4, task


def test_the_parsers_accept_a_bare_label_and_reply_unchanged() -> None:
    from .cblue_helpers import parse_text

    sample = Sample("s", {"answer_choices": ["相关", "不相关"]}, None)
    assert parse_text("KUAKE-IR", " 相关\n", sample) == "相关"
    assert parse_text("MedDG", " 多喝水。 ", sample) == "多喝水。"
