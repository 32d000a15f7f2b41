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


# --- a list of numbers is not an option index (issue 19, item 4) --------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Option 0: 1, 2, 3, ... 121",  # the reply that scored 1.0 as a "hit" on option 0
        "Option 0: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10",
        "Option 0: 1 2 3 4 5",
        "Option 0: 1, 2, 3\nOption 1: 4, 5, 6",
        "Answer: 1, 2, 3",
        "The answer is 1 or 2.",
        "答案：1，2，3",
        "选项 2、3",
        "option 1-3",
        "I choose option 1 and 2",
        "\\boxed{1, 2}",
        "1, 2, 3",
        "0 1 2 3",
        "[0, 1, 2]",
        '{"answer": [0, 1, 2]}',
        '{"answer": "0, 1"}',
    ],
)
def test_a_list_of_numbers_is_not_an_option_index(text: str) -> None:
    with pytest.raises(ParseError):
        parse_option_index(text)


def test_the_list_reply_says_why_it_is_invalid() -> None:
    with pytest.raises(ParseError, match="a list of numbers, not one option index"):
        parse_option_index("Option 0: 1, 2, 3, ... 121")


@pytest.mark.parametrize(
    ("text", "index", "how"),
    [
        # numbers elsewhere in the reply do not make the answer a list
        ("Options 0, 1 and 3 give lower yields. Answer: 2", 2, "an answer phrase"),
        ("Answer: 2, 85% yield", 2, "an answer phrase"),
        ("Answer: 2\n1. It has the highest yield.", 2, "an answer phrase"),
        ("答案：3，因为产率最高", 3, "an answer phrase"),
        ("Option 2: 85% yield, 90% ee", 2, "an option mention"),
        ("Option 0: 1, 2, 3\nOption 2 is the best choice.", 2, "an option mention"),
        ("Option 2 gives 91% yield with 2 equiv of base.", 2, "an option mention"),
        ("Answer: 2 - the only one with Pd", 2, "an answer phrase"),
        ("I would pick option 3.", 3, "a choose/select phrase"),
        ("\\boxed{4}", 4, "\\boxed{N}"),
    ],
)
def test_legitimate_fallback_reads_are_still_read_and_degraded(
    text: str, index: int, how: str
) -> None:
    from benchreg.core import registry

    parsed = registry.parsers.get("reaction_mc_option_index")(text, None)
    assert isinstance(parsed, Degraded) and parsed.answer == index, text
    assert how in parsed.reason


def test_a_list_reply_is_invalid_and_earns_nothing(tmp_path: Path) -> None:
    """The issue's case end to end: the reply is `invalid`, never a hit on option 0."""
    import json

    from benchreg import RunOptions, load_task, run_task

    spec = load_task("reaction_mc/all_varying")
    first = run_task(spec, view=None, system_cfg={"name": "random"}, roots={})
    texts = {s.id: "Option 0: 1, 2, 3, ... 121" for s in first.samples}
    path = tmp_path / "pred.json"
    path.write_text(json.dumps(texts), encoding="utf-8")
    model = {"name": "predictions", "path": str(path), "params": {"text_values": "parse"}}
    result = run_task(
        spec, view=None, system_cfg=model, roots={}, options=RunOptions(progress=False)
    )
    assert result.statuses["invalid"] == len(first.samples)
    assert all(p.degraded is None for p in result.predictions)
    values = {name: m.value for name, m in result.metrics.items()}
    assert values == dict.fromkeys(values, 0.0)
