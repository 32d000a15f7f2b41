"""The question records (records.py): what validation gives, and the id helpers.

Which questions are accepted or rejected, and how an error reads, is tested through the loader
(test_loader.py, test_records_property.py)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from benchreg.families.reaction_mc import records
from benchreg.families.reaction_mc.loader import _QUESTION

SAMPLE = Path(records.__file__).parent / "sample"


def _questions() -> list[dict[str, Any]]:
    out = []
    for question_type in records.QUESTION_TYPES:
        out += json.loads((SAMPLE / f"multiple_choice_{question_type}.json").read_text("utf-8"))
    return out


def _reordered(value: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    items = list(value.items())
    rng.shuffle(items)
    return dict(items)


def test_the_order_of_keys_does_not_change_a_question() -> None:
    """A question validates to the same plain dict whatever the order of its keys (top level,
    `input`, `meta`, a molecule), with the spec's defaults for absent optional fields."""
    rng = random.Random(0)
    for question in _questions():
        expected = _QUESTION.validate_python(copy.deepcopy(question))
        shuffled = _reordered(copy.deepcopy(question), rng)
        shuffled["input"] = _reordered(shuffled["input"], rng)
        shuffled["meta"] = _reordered(shuffled["meta"], rng)
        shuffled["input"]["reactants"][0] = _reordered(shuffled["input"]["reactants"][0], rng)
        assert _QUESTION.validate_python(shuffled) == expected
        assert type(expected) is dict and expected["meta"] == question["meta"]
        assert expected["varying_keys"] == question.get("varying_keys", [])


def test_absent_optional_fields_get_the_spec_defaults() -> None:
    question = copy.deepcopy(_questions()[0])
    question.pop("varying_keys", None)
    question["input"].pop("constant_conditions", None)
    question["input"]["reactants"] = [{"SMILES": "C"}, {"content": "x", "note": 1}]
    validated = _QUESTION.validate_python(question)
    assert validated["varying_keys"] == [] and validated["input"]["constant_conditions"] == {}
    assert validated["input"]["reactants"] == [
        {"SMILES": "C", "content": ""},
        {"content": "x", "note": 1, "SMILES": ""},
    ]


@pytest.mark.parametrize(
    ("question_id", "base"),
    [("t_q1", "t_q1"), ("t_q1_ref", "t_q1"), ("t_q1_ref_control", "t_q1"), ("no id", "no id")],
)
def test_base_id(question_id: str, base: str) -> None:
    assert records.base_id(question_id) == base


def test_id_suffix_and_family_of_each_type() -> None:
    assert [records.id_suffix(t) for t in records.QUESTION_TYPES] == [
        "", "", "_ref", "_ref", "_ref_control", "_ref_control"
    ]
    assert [records.base_family(t) for t in records.QUESTION_TYPES] == [
        "single_varying", "all_varying"
    ] * 3
