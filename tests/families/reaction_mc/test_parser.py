"""Parser `reaction_mc_option_index`: one 0-based option index from model text."""

from __future__ import annotations

import pytest

from benchreg.core.errors import ParseError
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
