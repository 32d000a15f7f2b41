"""Hand-made V6 questions for the reaction_mc tests.

`make_question` writes consistent `meta` from plain outcome rows: effective = yield x fractions,
computed here independently of the family code (numbers, "a:b" ratios and "N% ee" only).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchreg.families.reaction_mc.records import QUESTION_TYPES


def independent_effective(scores: dict[str, Any]) -> float:
    """The spec's formula for the simple notations used in the tests."""

    def ratio(value: Any) -> float:
        if value is None:
            return 1.0
        if isinstance(value, str) and ":" in value:
            a, b = (float(x.strip().lstrip("<>")) for x in value.split(":"))
            return max(a, b) / (a + b)
        x = float(value)
        return max(x, 1.0) / (x + 1.0)

    def ee(value: Any) -> float | None:
        if value is None:
            return None
        text = str(value).replace("% ee", "").replace("%", "").strip().lstrip("<>")
        return (100 + abs(float(text))) / 200

    enantio = ee(scores.get("ee"))
    if enantio is None:
        enantio = ratio(scores.get("er"))
    return float(scores["yield"]) * enantio * ratio(scores.get("dr")) * ratio(scores.get("rr"))


def cond(text: str, smiles: str = "") -> list[dict[str, str]]:
    return [{"content": text, "SMILES": smiles}]


def make_question(
    qid: str,
    qtype: str,
    outcomes: list[dict[str, Any]],
    *,
    answer: list[int] | None = None,
    references: list[dict[str, Any]] | None = None,
    key: str = "ligand",
) -> dict[str, Any]:
    """A consistent question; ``outcomes`` are meta.scores rows (yield required)."""
    scores = [{"yield": o["yield"], "ee": o.get("ee"), "dr": o.get("dr"), "er": o.get("er"),
               "rr": o.get("rr")} for o in outcomes]
    effective = [independent_effective(s) for s in scores]
    best = max(effective)
    rel = [e / best if best > 0 else 1.0 for e in effective]
    if answer is None:
        answer = [i for i, e in enumerate(effective) if abs(e - best) <= 1e-9 * max(best, 1)]
    single = qtype.startswith("single_varying")
    inp: dict[str, Any] = {
        "reactants": [{"content": "bromobenzene", "SMILES": "Brc1ccccc1"}],
        "products": [{"content": "biphenyl", "SMILES": "c1ccc(-c2ccccc2)cc1"}],
        "constant_conditions": {"solvents": cond("toluene", "Cc1ccccc1")},
    }
    if single:
        inp["fixed_conditions"] = {"reagents": cond("K2CO3")}
    if references is not None:
        inp["reference_conditions"] = references
    return {
        "id": qid,
        "question_type": qtype,
        "target_key": key if single else None,
        "varying_keys": [key] if single else [key, "reagents"],
        "input": inp,
        "options": [
            {key: cond(f"L{i}")} if single else {key: cond(f"L{i}"), "reagents": cond(f"B{i}")}
            for i in range(len(outcomes))
        ],
        "answer": answer,
        "meta": {
            "yields": [s["yield"] for s in scores],
            "effective_scores": [round(e, 6) for e in effective],
            "scores": scores,
            "option_relative_scores": [round(r, 6) for r in rel],
            "option_source_entries": [{"row_index": i, "entry_idx": str(i), "rxn_id": "t"}
                                      for i in range(len(outcomes))],
            "best_yield": max(s["yield"] for s in scores),
            "best_effective_score": round(best, 6),
            "doi": "10_0000_test",
            "parent_table_id": qid.split("_q")[0],
            "main_product_smiles": "c1ccc(-c2ccccc2)cc1",
        },
    }


def write_release(folder: Path, questions_by_type: dict[str, list[dict[str, Any]]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for qtype in QUESTION_TYPES:
        path = folder / f"multiple_choice_{qtype}.json"
        path.write_text(json.dumps(questions_by_type.get(qtype, []), indent=1), encoding="utf-8")
    return folder


@pytest.fixture
def question() -> Callable[..., dict[str, Any]]:
    return make_question


@pytest.fixture
def release(tmp_path: Path) -> Callable[[dict[str, list[dict[str, Any]]]], Path]:
    def write(questions_by_type: dict[str, list[dict[str, Any]]], name: str = "v6") -> Path:
        return write_release(tmp_path / name, questions_by_type)

    return write


@pytest.fixture
def effective() -> Callable[[dict[str, Any]], float]:
    return independent_effective
