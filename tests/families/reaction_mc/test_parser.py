"""Parser `reaction_mc_option_index`: one 0-based option index from model text."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg.core.errors import ParseError
from benchreg.core.types import Degraded
from benchreg.families.reaction_mc.parser import parse_option_index


@pytest.mark.parametrize(
    ("text", "index"),
    [
        ("2", 2), (" 3\n", 3), ("**1**", 1), ("`0`", 0), ("4.", 4),
        ("<think>option 1 or 3? maybe 3</think>2", 2),
        ("I compared option 0 and option 3 at length.</think>\nAnswer: 1", 1),
        ('{"answer": 3}', 3), ('```json\n{"option_index": 2}\n```', 2),
        ('Final: {"answer": 1}', 1),
        # nested objects: the answer key of the outer object, prose around it
        ('Result: {"answer": 2, "why": {"yield": 85, "option": 0}} done', 2),
        ('```json\n{"reasoning": {"best": {"yield": 91}}, "option_index": 3}\n```', 3),
        ('{"answer": "4"}', 4),
        ("The answer is 2.", 2), ("Answer: Option 4", 4), ("答案：3", 3), ("最终答案 0", 0),
        ("\\boxed{5}", 5), ("Option 1 looks weak; option 2 is best. Answer: 2", 2),
        ("I choose option 1", 1), ("选项 2", 2),
        ("Option 2 gives the best yield.", 2),
    ],
)
def test_parser_accepts(text: str, index: int) -> None:
    assert parse_option_index(text) == index


@pytest.mark.parametrize(
    "text",
    [
        "", "<think>2</think>", "Option 1 or option 2, hard to say", "answer 1, answer 3",
        "The best yield is 85% with 2 equiv of base", "none of them", '{"answer": "two"}',
        "<think>unclosed reasoning 2",
        '{"answer": 1} and then {"answer": 2}', '{"answer": null, "note": "option 2"}',
    ],
)
def test_parser_rejects_ambiguous(text: str) -> None:
    with pytest.raises(ParseError):
        parse_option_index(text)


# --- degraded reads (issue 13): an index recovered from prose is flagged --------------------------


@pytest.mark.parametrize(
    "text",
    ["2", " 3\n", "**1**", "`0`", "4.", "<think>option 1 or 3?</think>2", '{"answer": 3}',
     '```json\n{"option_index": 2}\n```'],
)
def test_the_requested_format_is_not_degraded(text: str) -> None:
    from benchreg.core import registry

    assert not isinstance(registry.parsers.get("reaction_mc_option_index")(text, None), Degraded)


@pytest.mark.parametrize(
    ("text", "index", "how"),
    [
        ('Final: {"answer": 1}', 1, "a JSON object inside other text"),
        ("\\boxed{5}", 5, "\\boxed{N}"),
        ("The answer is 2.", 2, "an answer phrase"),
        ("答案：3", 3, "an answer phrase"),
        ("I choose option 1", 1, "a choose/select phrase"),
        ("Option 2 gives the best yield.", 2, "an option mention"),
    ],
)
def test_an_index_found_in_prose_is_degraded(text: str, index: int, how: str) -> None:
    from benchreg.core import registry

    parsed = registry.parsers.get("reaction_mc_option_index")(text, None)
    assert isinstance(parsed, Degraded) and parsed.answer == index
    assert how in parsed.reason and "free text" in parsed.reason


def test_degraded_reads_are_counted_and_written(tmp_path: Path) -> None:
    import json

    from benchreg import RunOptions, load_task, run_task
    from benchreg.core.outputs import write_run

    spec = load_task("reaction_mc/all_varying")
    first = run_task(spec, view=None, system_cfg={"name": "random"}, roots={})
    ids = [s.id for s in first.samples]
    texts = {qid: ("The answer is 0." if i % 2 else "0") for i, qid in enumerate(ids)}
    path = tmp_path / "pred.json"
    path.write_text(json.dumps(texts), encoding="utf-8")
    model = {"name": "predictions", "path": str(path), "params": {"text_values": "parse"}}
    result = run_task(
        spec, view=None, system_cfg=model, roots={}, options=RunOptions(progress=False)
    )
    record = write_run(tmp_path / "job", result, {"model": model})
    assert record["degraded"] == len(ids) // 2 and result.statuses["ok"] == len(ids)
    rows = [json.loads(x) for x in (tmp_path / "job" / "samples.jsonl").read_text().splitlines()]
    assert sum("degraded" in r for r in rows) == len(ids) // 2
