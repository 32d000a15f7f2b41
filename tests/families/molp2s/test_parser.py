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


# --- no answer is invalid, nothing is recovered from prose (issue 19, item 4) --------------------


@pytest.mark.parametrize(
    "text",
    [
        "   \n",
        "<think>I pick 1</think>",
        "I pick candidate 1.",  # prose: an index is never recovered from it
        "selected_candidate_index: 1",
        "1",
        '{"selected_candidate_index": [0, 1]}',  # a list of numbers is not an index
        '{"selected_candidate_index": "0, 1"}',
        '{"selected_candidate_index": 1.0}',
        '{"selected_candidate_index": true}',
        '{"selected_candidate_index": null, "reasoning": "candidate 1"}',
        '{"record_id": "r0", "reasoning": "candidate 1"}',
    ],
)
def test_text_without_an_integer_index_is_invalid(text: str) -> None:
    with pytest.raises(ParseError):
        parse_selection(text, SAMPLE)


def test_no_parse_is_degraded() -> None:
    """MolP2S has no fallback reader: every accepted reply is the JSON object the prompt asks
    for, so no answer is flagged degraded."""
    from benchreg.core import registry
    from benchreg.core.types import Degraded

    parser = registry.parsers.get("molp2s_json")
    for text in ('{"selected_candidate_index": 1}', 'Reasoning. {"selected_candidate_index": 0}'):
        assert not isinstance(parser(text, SAMPLE), Degraded)


def test_a_list_of_numbers_is_invalid_end_to_end(release, tmp_path) -> None:
    """Output lines with no integer index are `invalid` and never hits (hits 0)."""
    import json

    from benchreg import RunOptions, load_task, run_task

    root = release()
    outputs = ['{"selected_candidate_index": [0, 1, 2, 3]}', "Candidate 0: 1, 2, 3", ""]
    lines = [
        json.dumps({"record_id": f"r{i}", "output": outputs[i % 3]}) for i in range(6)
    ]
    path = tmp_path / "preds.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_task(
        load_task("molp2s/gap"),
        view="correct",
        system_cfg={"name": "predictions", "path": str(path)},
        roots={"molp2s": str(root)},
        options=RunOptions(n_boot=0, progress=False),
    )
    assert result.statuses["invalid"] == 6 and result.counts["hits"] == 0
    assert result.metrics["accuracy"].value == 0.0
