"""Shared text helpers for parsers and prompts."""

from __future__ import annotations

import pytest

from benchreg.core.text import fill_template, json_objects, last_object_with, strip_reasoning


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>maybe 2</think>answer 3", "answer 3"),
        ("<THINKING>a\nb</THINKING> final", "final"),
        ("half a thought</think> 4", "4"),
        ("5 <reasoning>never closed", "5"),
        ("plain", "plain"),
    ],
)
def test_strip_reasoning(text: str, expected: str) -> None:
    assert strip_reasoning(text) == expected


def test_json_objects_handles_nesting_fences_and_prose() -> None:
    text = (
        'First {"a": 1}. Then\n```json\n{"answer": {"index": 2, "why": {"k": [1, {"z": 0}]}}}\n```'
        " and a stray { brace."
    )
    objects = json_objects(text)
    assert objects == [{"a": 1}, {"answer": {"index": 2, "why": {"k": [1, {"z": 0}]}}}]


def test_last_object_with_skips_reasoning_and_takes_the_last() -> None:
    text = '<think>{"pick": 0}</think> {"pick": 1} then corrected: {"pick": 2, "x": {"y": 1}}'
    assert last_object_with(text, "pick") == {"pick": 2, "x": {"y": 1}}
    assert last_object_with("no json", "pick") is None


def test_fill_template_replaces_known_names_only() -> None:
    template = 'Q: {question}\nOpts: {{ options }}\nReply as {"index": <n>} not {unknown}'
    text, used = fill_template(template, {"question": "why?", "options": "A, B"})
    assert used
    assert text == 'Q: why?\nOpts: A, B\nReply as {"index": <n>} not {unknown}'
    assert fill_template("nothing here {x}", {"y": "1"}) == ("nothing here {x}", False)
