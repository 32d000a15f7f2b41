"""The plain path of question validation against pydantic's (records.plain_question)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from benchreg.families.reaction_mc import records
from benchreg.families.reaction_mc.loader import _QUESTION

SAMPLE = Path(records.__file__).parent / "sample"
PLAIN_TYPES = [t for t in records.QUESTION_TYPES if not t.endswith("_reference")]


def _questions() -> list[dict[str, Any]]:
    out = []
    for question_type in records.QUESTION_TYPES:
        out += json.loads((SAMPLE / f"multiple_choice_{question_type}.json").read_text("utf-8"))
    return out


def _pydantic(data: Any) -> str | None:
    """pydantic's validated question as JSON text (key order kept), None when it rejects."""
    try:
        question = _QUESTION.validate_python(copy.deepcopy(data))
    except ValidationError:
        return None
    return json.dumps(question, default=lambda model: model.model_dump())


def _reordered(value: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    items = list(value.items())
    rng.shuffle(items)
    return dict(items)


def _variants(question: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """The question changed at one place each: key orders, absent optional fields, extras, values
    of other types (some still valid for pydantic, some not)."""
    out = []

    def change(edit: Any) -> None:
        variant = copy.deepcopy(question)
        edit(variant)
        out.append(variant)

    change(lambda q: None)
    out.append(_reordered(copy.deepcopy(question), rng))
    change(lambda q: q.__setitem__("input", _reordered(q["input"], rng)))
    change(lambda q: q.__setitem__("meta", _reordered(q["meta"], rng)))
    change(lambda q: q["input"]["reactants"].__setitem__(0, {"SMILES": "C", "content": "x"}))
    change(lambda q: q["input"]["reactants"].__setitem__(0, {"SMILES": "C"}))
    change(lambda q: q["input"]["reactants"].__setitem__(0, {"content": "x", "note": 1}))
    change(lambda q: q["input"]["reactants"].__setitem__(0, {"note": 1, "content": "x"}))
    change(lambda q: q["input"]["reactants"].__setitem__(0, {"content": 3, "SMILES": "C"}))
    change(lambda q: q["input"]["products"].__setitem__(0, {"content": None, "SMILES": "C"}))
    change(lambda q: q["input"]["products"].append("CCO"))
    change(lambda q: q.update(extra_field={"kept": True}))
    change(lambda q: q.pop("varying_keys", None))
    change(lambda q: q.pop("target_key", None))
    change(lambda q: q.update(target_key=None))
    change(lambda q: q.update(target_key=7))
    change(lambda q: q.update(varying_keys=["a", 2]))
    change(lambda q: q.update(answer=[True]))
    change(lambda q: q.update(answer=[1.0]))
    change(lambda q: q.update(answer=[]))
    change(lambda q: q.update(answer=[len(q["options"])]))
    change(lambda q: q.update(options=[]))
    change(lambda q: q.update(options=["a"]))
    change(lambda q: q.update(question_type="no_such_type"))
    change(lambda q: q.update(question_type=["single_varying"]))
    change(lambda q: q.update(id=12))
    change(lambda q: q.pop("meta"))
    change(lambda q: q["meta"]["yields"].append(1.0))
    change(lambda q: q["meta"].update(scores=[1] * len(q["options"])))
    change(lambda q: q["meta"].pop("option_source_entries"))
    change(lambda q: q["input"].pop("constant_conditions", None))
    change(lambda q: q["input"].update(constant_conditions=[]))
    change(lambda q: q["input"].update(fixed_conditions=None))
    change(lambda q: q["input"].update(fixed_conditions="x"))
    change(lambda q: q["input"].update(reference_conditions=None))
    change(lambda q: q["input"].update(reference_conditions=[]))
    change(lambda q: q["input"].pop("reactants"))
    change(lambda q: q.update(input=[]))
    return out


def test_a_plain_question_validates_to_what_pydantic_gives() -> None:
    rng = random.Random(0)
    taken = refused = 0
    for question in _questions():
        for variant in _variants(question, rng):
            expected = _pydantic(variant)
            plain = records.plain_question(copy.deepcopy(variant))
            if plain is None:
                refused += 1  # pydantic decides, as before
                continue
            taken += 1
            assert expected is not None, f"plain path took what pydantic rejects: {variant}"
            assert json.dumps(plain) == expected  # equal, keys in the same order
    assert taken > 100 and refused > 100  # both paths were exercised


@pytest.mark.parametrize("question_type", PLAIN_TYPES)
def test_the_shipped_sample_takes_the_plain_path(question_type: str) -> None:
    questions = json.loads((SAMPLE / f"multiple_choice_{question_type}.json").read_text("utf-8"))
    assert all(records.plain_question(q) is not None for q in questions)


def test_reference_questions_go_through_pydantic() -> None:
    path = SAMPLE / "multiple_choice_single_varying_reference.json"
    questions = json.loads(path.read_text("utf-8"))
    assert questions and all(records.plain_question(q) is None for q in questions)
