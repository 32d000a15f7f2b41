"""The data-set validator `cblue_gold`."""

from __future__ import annotations

import json
from pathlib import Path

from .cblue_helpers import load, row, write_jsonl


def test_gold_validator_flags_structured_gold_that_disagrees_with_target(tmp_path: Path) -> None:
    from benchreg import load_task
    from benchreg.core import registry
    from benchreg.core.pipeline import load_context

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


def test_same_json_shortcut_implies_equal_item_sets() -> None:
    """The validator's quick test never says "same" where the item sets differ."""
    import datetime
    import random

    from benchreg.families.cblue.official import item_set
    from benchreg.families.cblue.validators import _same_json

    values = [
        "x",
        "1",
        1,
        1.0,
        True,
        None,
        float("nan"),
        float("inf"),
        [],
        ["x"],
        ("x",),
        {"k": "x"},
        datetime.date(2020, 1, 1),
        2**70,
    ]
    rng = random.Random(0)
    for _ in range(5000):
        a = [{rng.choice("ab"): rng.choice(values)} for _ in range(rng.randint(0, 2))]
        b = [{rng.choice("ab"): rng.choice(values)} for _ in range(rng.randint(0, 2))]
        if _same_json(a, b):
            assert item_set(a) == item_set(b), (a, b)
    assert _same_json([{"a": "x"}], [{"a": "x"}])
    assert not _same_json([{1: "x"}], [{"1": "x"}])  # orjson cannot write it: the item sets decide
