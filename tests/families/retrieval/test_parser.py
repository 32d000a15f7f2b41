"""The parser `retrieval_json`: model text to a retrieval answer."""

from __future__ import annotations

import pytest

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.types import Sample
from benchreg.families.retrieval.parser import parse_results

SAMPLE = Sample("q", {"question": "?"}, [], {"modality": "pdf"})


def test_registered() -> None:
    assert registry.parsers.get("retrieval_json") is parse_results


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"results": [{"source_id": "a"}]}', {"results": [{"source_id": "a"}]}),
        ('Sure. ```json\n{"results": [], "latency_s": 1}\n``` done',
         {"results": [], "latency_s": 1}),
        ('first {"results": [1]} then {"note": 0} and {"results": [2]}', {"results": [2]}),
        ('{"outer": {"results": [1]}}', None),  # nested: not a top-level object with results
        ('<think>{"results": ["draft"]}</think>{"results": ["final"]}', {"results": ["final"]}),
        ('[{"source_id": "b"}]', {"results": [{"source_id": "b"}]}),
        ('```json\n[{"source_id": "b"}]\n```', {"results": [{"source_id": "b"}]}),
        ('```\n[]\n```', {"results": []}),
        ('<think>{"results": [9]}</think> [{"source_id": "b"}]', {"results": [{"source_id": "b"}]}),
    ],
)
def test_answers_are_found(text: str, expected: dict | None) -> None:
    if expected is None:
        with pytest.raises(ParseError):
            parse_results(text, SAMPLE)
    else:
        assert parse_results(text, SAMPLE) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2", "malformed JSON list (Expecting ',' delimiter)"),
        ("[1, 2,]", "malformed JSON list (Expecting value)"),
        ("nothing found", "no JSON object with 'results' and no JSON list of results"),
        ('{"answer": 1}', "no JSON object with 'results' and no JSON list of results"),
        ("", "no JSON object with 'results' and no JSON list of results"),
        ("Here: [1]", "no JSON object with 'results' and no JSON list of results"),
    ],
)
def test_unparseable_text(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_results(text, SAMPLE)
    assert str(info.value) == message
