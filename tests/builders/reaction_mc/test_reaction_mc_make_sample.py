"""The embedded reaction_mc sample is what `builders/reaction_mc/make_sample.py` writes."""

from __future__ import annotations

import json
from pathlib import Path

from benchreg.families.reaction_mc.records import QUESTION_TYPES
from builders.reaction_mc.make_sample import sample_questions

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "benchreg" / "families" / "reaction_mc" / "sample"


def _questions(qtype: str) -> dict[str, dict]:
    data = json.loads((SAMPLE / f"multiple_choice_{qtype}.json").read_text(encoding="utf-8"))
    return {q["id"]: q for q in data}


def test_sample_matches_its_sources() -> None:
    expected = sample_questions()
    for qtype in QUESTION_TYPES:
        assert list(_questions(qtype).values()) == expected[qtype], qtype
