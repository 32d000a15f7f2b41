"""The parser `retrieval_json`: model text to a retrieval answer."""

from __future__ import annotations

import pytest

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.types import Degraded, Sample
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
    ],
)
def test_answers_are_found(text: str, expected: dict | None) -> None:
    if expected is None:
        with pytest.raises(ParseError):
            parse_results(text, SAMPLE)
    else:
        assert parse_results(text, SAMPLE) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[{"source_id": "b"}]', {"results": [{"source_id": "b"}]}),
        ('```json\n[{"source_id": "b"}]\n```', {"results": [{"source_id": "b"}]}),
        ('```\n[]\n```', {"results": []}),
        ('<think>{"results": [9]}</think> [{"source_id": "b"}]', {"results": [{"source_id": "b"}]}),
    ],
)
def test_a_bare_list_is_a_fallback_read_and_degraded(text: str, expected: dict) -> None:
    """The prompt asks for an object with `results`; a reply that is only a list is read, and
    flagged (issue 19: a fallback read is degraded, so the strict view counts it invalid)."""
    parsed = parse_results(text, SAMPLE)
    assert isinstance(parsed, Degraded) and parsed.answer == expected
    assert "bare JSON list" in parsed.reason


def test_the_requested_object_is_not_degraded() -> None:
    for text in ('{"results": []}', '```json\n{"results": [{"source_id": "a"}]}\n```'):
        assert not isinstance(parse_results(text, SAMPLE), Degraded)


@pytest.mark.parametrize(
    "text",
    ["[1, 2, 3]", '{"results": [1, 2, 3]}', '{"results": ["a", "b"]}', '{"results": "a, b"}',
     '{"results": [{"source_id": 3}]}'],
)
def test_numbers_or_ids_are_not_results(text: str) -> None:
    """A list of numbers (or bare ids) is not a ranked list of results: the answer is invalid."""
    from benchreg.core.types import Status

    parsed = parse_results(text, SAMPLE)
    answer = parsed.answer if isinstance(parsed, Degraded) else parsed
    checked = registry.answer_schemas.get("retrieval_results").check(answer, SAMPLE)
    assert checked.status is Status.INVALID, (text, checked)


def test_text_without_results_is_invalid_end_to_end(tmp_path) -> None:
    """No answer in the text is `invalid`, scored as no results (worst value); an empty
    `results` list is an answer (the prompt asks for it when there is no evidence)."""
    import json

    from benchreg import RunOptions, load_task, run_task
    from benchreg.core.pipeline import data_root_for, load_dataset

    spec = load_task("retrieval/conversation")
    dataset = load_dataset(spec, spec.resolve_view(None), data_root_for(spec, {}))
    ids = [s.id for s in dataset.samples]
    texts = ["", "I could not find anything.", '{"results": []}', "[]"]
    path = tmp_path / "run.jsonl"
    lines = [json.dumps({"query_id": q, "output": texts[i % 4]}) for i, q in enumerate(ids)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = {"name": "predictions", "path": str(path)}
    result = run_task(
        spec, view=None, system_cfg=model, roots={}, options=RunOptions(n_boot=0, progress=False)
    )
    statuses = [p.status.value for p in result.predictions]
    assert statuses == [("invalid", "invalid", "ok", "ok")[i % 4] for i in range(len(ids))]
    degraded = [p.degraded is not None for p in result.predictions]
    assert degraded == [i % 4 == 3 for i in range(len(ids))]


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
