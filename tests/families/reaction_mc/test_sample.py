"""The embedded sample: the spec's section 12 questions, offline runs.

That it is what its builder writes: tests/builders/reaction_mc/test_reaction_mc_make_sample.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg import load_task, run_task
from benchreg.families.reaction_mc.records import QUESTION_TYPES

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "benchreg" / "families" / "reaction_mc" / "sample"


def _questions(qtype: str) -> dict[str, dict]:
    data = json.loads((SAMPLE / f"multiple_choice_{qtype}.json").read_text(encoding="utf-8"))
    return {q["id"]: q for q in data}


def test_spec_section_12_answers_and_relative_scores() -> None:
    """The numbers printed in spec 000, section 12."""
    base = "10_1002_anie_202416132_si_"
    shown = {
        ("single_varying", base + "5_table_0_q1"): ([0], [1.0, 0.587629]),
        ("single_varying_reference", base + "5_table_0_q1_ref"): ([1], [0.587629, 1.0]),
        ("single_varying_reference_control", base + "5_table_0_q1_ref_control"):
            ([0], [1.0, 0.587629]),
        ("all_varying_reference", base + "4_table_1_q4_ref"):
            ([2], [0.79661, 0.474576, 1.0, 0.677966, 0.762712]),
        ("all_varying_reference_control", base + "4_table_1_q4_ref_control"):
            ([4], [0.677966, 0.474576, 0.762712, 0.79661, 1.0]),
    }
    for (qtype, qid), (answer, rel) in shown.items():
        q = _questions(qtype)[qid]
        assert q["answer"] == answer
        assert q["meta"]["option_relative_scores"] == rel
        yields = q["meta"]["yields"]
        assert [round(y / max(yields), 6) for y in yields] == rel
    refs = _questions("all_varying_reference")[base + "4_table_1_q4_ref"]["input"]
    assert [r["yield"] for r in refs["reference_conditions"]] == [27.0, 32.0, 42.0]


@pytest.mark.parametrize("qtype", QUESTION_TYPES)
def test_every_task_runs_offline(qtype: str) -> None:
    result = run_task(load_task(f"reaction_mc/{qtype}"), view=None,
                      system_cfg={"name": "baseline"}, roots={})
    assert result.system_name == "baseline:reaction_mc_nearest_reference"
    assert result.statuses["ok"] == len(result.samples) > 0
    assert 0.0 < result.metrics["avg_relative_score"].value <= 1.0
