"""Invalid never beats wrong (issue 37, item 2), on every one of the 16 PromptCBLUE tasks.

An answer benchreg marks invalid scores as the official scorer scores it where that scorer gives a
number (a JSON number or bool label is one more wrong class, named by its text: numpy turns the
list of predictions handed to scikit-learn into strings), and as a wrong answer that matches
nothing where it aborts (null, lists, objects as labels; non-lists for extraction; non-strings for
replies and reports).

OFFICIAL holds the numbers the unmodified official per-task functions (michael-wzhu/PromptCBLUE
b0753a6, src/evaluation/evaluators.py, dispatch and label lists of evaluate.py) returned for
`mixed_types()` against ../shared/data/promptcblue/raw/dev_structured.json, run once with the
environment of the reference README (scikit-learn 1.9.1, rouge_chinese 1.0.3). Before this change
benchreg gave CHIP-CTC macro-F1 0.8889 there (the official value is 0.4444).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from benchreg.core.types import Status
from benchreg.families.cblue.catalogue import TASK_NAMES, TASKS
from tests.conftest import shared_path

from .cblue_helpers import TOL, load_json, run_cblue, scores_of, write_json

SAMPLE_DIR = Path(__file__).resolve().parents[3] / "benchreg" / "families" / "cblue" / "sample"
GOLD: dict[str, list[dict[str, Any]]] = load_json(SAMPLE_DIR / "dev_structured.json")

# (position, answer) planted in the toy dev gold; the tasks not named keep their gold
PLANTED: dict[str, list[tuple[int, Any]]] = {
    "CHIP-CTC": [(4, 3)],
    "IMCS-V2-DAC": [(1, True), (3, 3)],
    "KUAKE-QIC": [(0, 1.5), (2, 1.5)],
    "CHIP-STS": [(1, 0)],
    "KUAKE-IR": [(2, False)],
    "KUAKE-QQR": [(0, 2), (4, "WRONG")],
    "KUAKE-QTR": [(3, 7)],
}
OFFICIAL: dict[str, tuple[float, float, float]] = {
    "CHIP-CTC": (0.5, 0.4, 0.4444444444444444),
    "IMCS-V2-DAC": (0.3333333333333333, 0.19999999999999998, 0.25),
    "KUAKE-QIC": (0.5, 0.3, 0.375),
    "CHIP-STS": (1.0, 0.8, 0.8800000000000001),
    "KUAKE-IR": (1.0, 0.8, 0.8857142857142858),
    "KUAKE-QQR": (1.0, 0.6, 0.7),
    "KUAKE-QTR": (1.0, 0.8, 0.8800000000000001),
    "CMeEE-V2": (0.9333333333333333, 0.875, 0.9032258064516129),
    "CHIP-CDN": (0.8571428571428571, 0.75, 0.7999999999999999),
    "IMCS-V2-MRG": (0.9999999949999997,) * 3,
    "MedDG": (0.9999999949999999,) * 3,
}


def mixed_types(gold: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The toy dev gold with answers of other types that the official scorer still scores:
    number/bool labels, off-schema extraction items, a report with an extra non-string key."""
    mixed = copy.deepcopy(gold)
    for task, planted in PLANTED.items():
        for position, answer in planted:
            mixed[task][position]["answer"] = answer
    first = gold["CMeEE-V2"][0]["answer"][:1]
    mixed["CMeEE-V2"][0]["answer"] = [*first, {"entity": 3, "type": "dis"}]
    mixed["CHIP-CDN"][1]["answer"] = [{"entity": "x", "type": "normalization", "extra": None}]
    mixed["IMCS-V2-MRG"][0]["answer"] = {**gold["IMCS-V2-MRG"][0]["answer"], "extra": 5}
    return mixed


@pytest.fixture(scope="module")
def mixed_results(raw_module: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    gold = load_json(raw_module / "dev_structured.json")
    path = write_json(tmp_path_factory.mktemp("mixed") / "mixed.json", mixed_types(gold))
    return {task: run_cblue(task, path, raw_module) for task in TASK_NAMES}


@pytest.fixture(scope="module")
def raw_module() -> Path:
    """../shared/data/promptcblue/raw, as the `raw` fixture, for module-scoped fixtures."""
    return shared_path("data", "promptcblue", "raw")


@pytest.mark.parametrize("task", TASK_NAMES)
def test_mixed_types_score_as_the_official_scorer(task: str, mixed_results: dict) -> None:
    ours = list(scores_of(mixed_results[task]).values())
    assert ours == pytest.approx(list(OFFICIAL.get(task, (1.0, 1.0, 1.0))), abs=TOL), task
    planted = [p for p, a in PLANTED.get(task, []) if not isinstance(a, str)]
    statuses = [mixed_results[task].predictions[p].status for p in planted]
    assert statuses == [Status.INVALID] * len(planted)


def test_mixed_type_labels_agree_with_scikit_learn_as_the_official_scorer_calls_it(
    raw_module: Path, mixed_results: dict
) -> None:
    """The official call: classification_report(gold, raw predictions, zero_division=0)."""
    from sklearn.metrics import classification_report

    mixed = mixed_types(load_json(raw_module / "dev_structured.json"))
    gold = load_json(raw_module / "dev_structured.json")
    for task in PLANTED:
        empty = TASKS[task].empty_label
        preds = [empty if e["answer"] == "" else e["answer"] for e in mixed[task]]
        report = classification_report(
            [e["answer"] for e in gold[task]], preds, output_dict=True, zero_division=0
        )
        ours = scores_of(mixed_results[task])
        average = "macro avg" if "macro-f1" in ours else "weighted avg"
        assert list(ours.values())[-1] == pytest.approx(report[average]["f1-score"], abs=TOL)


WRONG: dict[str, Any] = {
    "extraction": [{"entity": "WRONG", "type": "WRONG"}],
    "classification": "WRONG",
    "reply": "WRONG",
    "report": {"主诉": "WRONG"},
}
INVALID: dict[str, list[Any]] = {
    "extraction": [None, "x", 3, {"entity": "x"}, ["x"]],
    "classification": [None, 3, True, 1.5, ["x"], {"label": "x"}],
    "reply": [None, 3, ["x"]],
    "report": [None, 3, ["x"], {"主诉": 1}, "no headings here"],
}


def planted_file(tmp_path: Path, task: str, position: int, answer: Any, name: str) -> Path:
    entries = [dict(e) for e in GOLD[task]]
    entries[position]["answer"] = answer
    return write_json(tmp_path / f"{name}.json", {task: entries})


@pytest.mark.parametrize("task", TASK_NAMES)
def test_an_invalid_answer_never_scores_above_a_wrong_one_at_the_same_sample(
    task: str, tmp_path: Path
) -> None:
    kind = TASKS[task].kind
    wrong = run_cblue(task, planted_file(tmp_path, task, 0, WRONG[kind], "wrong"), None)
    for i, answer in enumerate(INVALID[kind]):
        invalid = run_cblue(task, planted_file(tmp_path, task, 0, answer, f"inv{i}"), None)
        assert invalid.predictions[0].status is Status.INVALID, (task, answer)
        for name, value in scores_of(invalid).items():
            assert value <= scores_of(wrong)[name] + TOL, (task, answer, name)
        if kind in ("classification", "extraction"):  # exactly one wrong label / item
            assert scores_of(invalid) == pytest.approx(scores_of(wrong), abs=TOL), (task, answer)
