"""Answer schemas: statuses of labels, reports and random answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchreg.families.cblue.catalogue import TASK_NAMES

from .cblue_helpers import (
    TOL,
    assert_scores,
    load_json,
    reference_scores,
    run_cblue,
    scores_of,
    write_json,
)


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
    assert result.statuses["out_of_range"] == 1
    # classes {非上述类型: P=1, R=4/5, F1=8/9; 随便说说: 0, 0, 0} -> macro-f1 = 4/9
    assert scores_of(result)["macro-f1"] == pytest.approx(4 / 9, abs=TOL)


def test_report_string_is_split_into_sections(raw: Path, reference: Path, tmp_path: Path) -> None:
    data = load_json(reference / "perfect.json")
    for entry in data["IMCS-V2-MRG"]:
        entry["answer"] = "\n".join(f"{k}：{v}" for k, v in entry["answer"].items())
    result = run_cblue("IMCS-V2-MRG", write_json(tmp_path / "mrg.json", data), raw)
    assert result.statuses["ok"] == 5
    assert isinstance(result.predictions[0].answer, dict)
    assert_scores(result, reference_scores(reference, "perfect", "IMCS-V2-MRG"))


def test_random_answers_are_valid_and_in_range() -> None:
    for task in TASK_NAMES:
        result = run_cblue(task, None, None, system="random")
        assert result.statuses["ok"] == len(result.samples), task


def test_one_line_report_string_is_split_and_flagged_degraded(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    """A results.json report string with its sections joined by `；` on one line (issue 13)."""
    data = load_json(reference / "perfect.json")
    for entry in data["IMCS-V2-MRG"]:
        entry["answer"] = "；".join(f"{k}：{v}" for k, v in entry["answer"].items())
    result = run_cblue("IMCS-V2-MRG", write_json(tmp_path / "mrg.json", data), raw)
    assert result.statuses["ok"] == 5
    assert all(p.degraded and "one line" in p.degraded for p in result.predictions)
    structured = load_json(raw / "dev_structured.json")["IMCS-V2-MRG"]
    gold = {e["sample_id"]: e["answer"] for e in structured}
    assert {p.sample_id: p.answer for p in result.predictions} == gold
    assert_scores(result, reference_scores(reference, "perfect", "IMCS-V2-MRG"))


def test_report_string_in_the_documented_layout_is_not_degraded(
    raw: Path, reference: Path, tmp_path: Path
) -> None:
    data = load_json(reference / "perfect.json")
    for entry in data["IMCS-V2-MRG"]:
        entry["answer"] = "\n".join(f"{k}：{v}" for k, v in entry["answer"].items())
    result = run_cblue("IMCS-V2-MRG", write_json(tmp_path / "mrg.json", data), raw)
    assert not any(p.degraded for p in result.predictions)


def test_off_schema_items_counts_what_item_by_item_validation_counts() -> None:
    """One validation of the whole list gives the count of items the item model rejects."""
    import random

    from pydantic import TypeAdapter, ValidationError

    from benchreg.families.cblue.answer import ITEM_MODELS, off_schema_items

    class Items(list):  # type: ignore[type-arg]
        pass

    values = ["x", "", 1, None, ["a"], [""], [], [1], {"a": "b"}, "normalization", True]
    rng = random.Random(0)
    for task, model in ITEM_MODELS.items():
        adapter = TypeAdapter(model)
        keys = [f.alias or name for name, f in model.model_fields.items()]
        for _ in range(300):
            answer = []
            for _ in range(rng.randint(0, 6)):
                if rng.random() < 0.1:
                    answer.append(rng.choice(values))
                    continue
                names = [k for k in keys if rng.random() < 0.9] + ["extra"] * (rng.random() < 0.1)
                answer.append({k: rng.choice([*values, "x", "x", ["a", "b"]]) for k in names})
            want = 0
            for item in answer:
                try:
                    adapter.validate_python(item)
                except ValidationError:
                    want += 1
            assert off_schema_items(task, answer) == want, (task, answer)
            assert off_schema_items(task, Items(answer)) == want


def test_off_schema_items_plain_check_accepts_only_what_pydantic_accepts() -> None:
    """The plain-dict fast path (every item plainly in the shape -> 0) never hides an item the
    item model rejects: answers near the shape (one item changed at a time: a str subclass, a
    tuple for a list, an empty list element, a dict subclass, a key renamed or added, the wrong
    fixed value) count exactly as item-by-item validation counts."""
    from pydantic import TypeAdapter, ValidationError

    from benchreg.families.cblue.answer import ITEM_MODELS, off_schema_items

    class Text(str):
        pass

    class Item(dict):  # type: ignore[type-arg]
        pass

    def good_item(model: type) -> dict[str, Any]:
        item: dict[str, Any] = {}
        for name, field in model.model_fields.items():
            key = field.alias or name
            if "list" in str(field.annotation):
                item[key] = ["a", "b"]
            elif "Literal" in str(field.annotation):
                item[key] = "normalization"
            else:
                item[key] = "x"
        return item

    def variants(item: dict[str, Any]) -> list[Any]:
        out: list[Any] = [item, Item(item), {**item, "extra": "x"}]
        for key, value in item.items():
            rest = {k: v for k, v in item.items() if k != key}
            out += [rest, {**rest, key + "_": value}, {**item, key: 1}, {**item, key: None}]
            if isinstance(value, list):
                out += [{**item, key: tuple(value)}, {**item, key: [""]}, {**item, key: []}]
                out += [{**item, key: [Text("a")]}, {**item, key: ["a", 1]}]
            else:
                out += [{**item, key: Text(value)}, {**item, key: ""}, {**item, key: "other"}]
        return out

    for task, model in ITEM_MODELS.items():
        adapter = TypeAdapter(model)
        good = good_item(model)
        adapter.validate_python(good)
        for variant in variants(good):
            answer = [dict(good), variant, dict(good)]
            try:
                adapter.validate_python(variant)
                want = 0
            except ValidationError:
                want = 1
            assert off_schema_items(task, answer) == want, (task, variant)
        assert off_schema_items(task, [good] * 5) == 0
        assert off_schema_items(task, []) == 0
