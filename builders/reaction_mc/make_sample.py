"""Regenerate the embedded reaction_mc sample (benchreg/families/reaction_mc/sample/).

The sample = the questions shown in spec 000 section 12 (reconstructed by hand in
sample_source/spec_section12.json) + the builder's output for sample_source/demo_screen.csv
(invented numbers) with sample_source/demo_config.yaml and seed 0.

Run from the project root:

    python -m builders.reaction_mc.make_sample
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchreg.core.io import atomic_write_text
from benchreg.families.reaction_mc.build import build
from benchreg.families.reaction_mc.loader import data_file_name, dump_questions
from benchreg.families.reaction_mc.records import QUESTION_TYPES

FAMILY = Path(__file__).resolve().parents[2] / "benchreg" / "families" / "reaction_mc"
SOURCE = FAMILY / "sample_source"
SAMPLE = FAMILY / "sample"
SEED = 0


def sample_questions() -> dict[str, list[dict]]:
    spec = json.loads((SOURCE / "spec_section12.json").read_text(encoding="utf-8"))
    built, _ = build(SOURCE / "demo_config.yaml", SEED)
    return {t: [*spec.get(t, []), *built.get(t, [])] for t in QUESTION_TYPES}


def main() -> int:
    SAMPLE.mkdir(exist_ok=True)
    for qtype, questions in sample_questions().items():
        atomic_write_text(SAMPLE / data_file_name(qtype), dump_questions(questions))
        print(f"{qtype}: {len(questions)} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
