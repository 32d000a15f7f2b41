"""The MolP2S parser: the last JSON object with `selected_candidate_index`, reasoning tolerated."""

from __future__ import annotations

import pytest

from benchreg.core.errors import ParseError
from benchreg.families.molp2s.parser import parse_selection
from tests.families.molp2s.conftest import SAMPLE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"record_id": "r0", "selected_candidate_index": 1, "reasoning": "x"}', 1),
        ('```json\n{"selected_candidate_index": 0}\n```', 0),
        ('I think {"a": 1} then {"selected_candidate_index": 1}', 1),
        ('<think>{"selected_candidate_index": 0}</think>{"selected_candidate_index": 1}', 1),
        ('first {"selected_candidate_index": 0} final {"selected_candidate_index": 1}', 1),
    ],
)
def test_parser_tolerates_fences_and_reasoning(text: str, expected: int) -> None:
    assert parse_selection(text, SAMPLE) == expected


@pytest.mark.parametrize(
    "text", ["", "candidate 1", '{"selected_candidate_index": "1"}', '{"index": 1}']
)
def test_parser_marks_invalid(text: str) -> None:
    with pytest.raises(ParseError):
        parse_selection(text, SAMPLE)
