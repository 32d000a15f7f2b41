"""The data-set validator `cblue_gold`."""

from __future__ import annotations

import json
from pathlib import Path

from .cblue_helpers import load, row, write_jsonl


def test_gold_validator_flags_structured_gold_that_disagrees_with_target(tmp_path: Path) -> None:
    from benchreg import load_task
    from benchreg.core import registry
    from benchreg.core.run import load_context

    write_jsonl(tmp_path / "dev.json", [row("a", target="相关"), row("b", target="不相关")])
    (tmp_path / "dev_structured.json").write_text(
        json.dumps({"KUAKE-IR": [{"sample_id": "a", "answer": "不相关"}]}), encoding="utf-8"
    )
    dataset = load("KUAKE-IR", tmp_path)
    ctx = load_context(load_task("cblue/KUAKE-IR"), "dev", tmp_path)
    findings = registry.validators.get("cblue_gold")(dataset, ctx)
    assert [(f.where, f.message) for f in findings] == [
        ("a", "structured gold differs from the parsed `target` text")
    ]
