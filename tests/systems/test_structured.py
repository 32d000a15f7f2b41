"""Answer schemas drive decoding (`model.structured`): every family's schema states itself as a
JSON Schema, sent per sample as `response_format` in the form asked for; a server that refuses
or ignores it is one clear error, before anything is written."""

from __future__ import annotations

import json

import pytest

from benchreg import RunOptions, load_task
from benchreg.core.errors import BenchregError
from benchreg.core.pipeline import prepare
from benchreg.core.types import Sample
from tests.systems.conftest import chat_cfg, preflight, run

TASKS = [
    "molp2s/gap",
    "reaction_mc/all_varying",
    "cblue/CHIP-CTC",
    "cblue/CMeEE-V2",
    "cblue/IMCS-V2-MRG",
    "cblue/MedDG",
    "cblue/CHIP-CDEE",
]


def _samples(task: str) -> list[Sample]:
    bound = load_task(task)
    options = RunOptions(progress=False)
    return prepare(bound, view=None, roots={}, options=options, announce=False).samples


@pytest.mark.parametrize("task", TASKS)
def test_every_schema_states_itself_and_its_own_answers_fit(task: str) -> None:
    """The schema of each sample, and the gold answer follows it (checked with a small
    validator of the keywords the schemas use)."""
    schema = load_task(task).schema
    for sample in _samples(task)[:3]:
        stated = schema.json_schema(sample)
        assert stated is not None
        json.dumps(stated)  # JSON data
        gold = sample.gold
        if not schema.json_is_answer:  # the reply object the parser reads
            key = next(iter(stated["properties"]))
            gold = {key: gold[0] if isinstance(gold, list) else gold}
        assert _follows(gold, stated), (task, sample.id, gold)


def test_an_index_schema_is_bounded_by_the_sample() -> None:
    schema = load_task("molp2s/gap").schema
    for sample in _samples("molp2s/gap"):
        n = len(sample.input["candidate_completed_smiles"])
        prop = schema.json_schema(sample)["properties"]["selected_candidate_index"]
        assert prop == {"type": "integer", "enum": list(range(n))}


@pytest.mark.parametrize("form", ["json_schema", "json_object"])
def test_the_schema_is_sent_per_sample_in_the_form_asked(fake_server, form: str) -> None:
    server = fake_server()
    result = run("molp2s/gap", chat_cfg(server.base_url, structured=form), limit=4)
    assert result.statuses["ok"] == 4
    sent = [b for b in server.bodies if "messages" in b][-4:]
    # Requests run concurrently, so each body is paired with its sample by the prompt it carries.
    for sample in result.samples:
        candidates = sample.input["candidate_completed_smiles"]
        (body,) = [b for b in sent if _carries_all(b["messages"], candidates)]
        response_format = body["response_format"]
        assert response_format["type"] == form
        schema = (
            response_format["json_schema"]["schema"]
            if form == "json_schema"
            else response_format["schema"]
        )
        n = len(candidates)
        assert schema["properties"]["selected_candidate_index"]["enum"] == list(range(n))
    assert result.system_report.stats["structured"]["with_schema"] == 4


def _carries_all(messages: list[dict], texts: list[str]) -> bool:
    prompt = "\n".join(str(m["content"]) for m in messages)
    return all(text in prompt for text in texts)


def test_a_json_answer_skips_the_text_parser_and_is_checked(fake_server) -> None:
    server = fake_server()
    result = run("cblue/CHIP-CTC", chat_cfg(server.base_url, structured="json_schema"), limit=4)
    assert result.statuses["ok"] == 4
    for prediction in result.predictions:
        assert prediction.raw_text == json.dumps(prediction.answer, ensure_ascii=False)


def test_structured_output_changes_the_cache_key(fake_server, tmp_path) -> None:
    server = fake_server()
    for structured in ("off", "json_schema", "off"):
        cfg = chat_cfg(server.base_url, structured=structured, preflight=False)
        run("molp2s/gap", cfg, limit=2, cache="read_write", cache_dir=tmp_path)
    assert server.chat_requests == 4  # off, json_schema; the second off is cached


def test_a_server_that_refuses_the_form_is_one_clear_error(fake_server) -> None:
    server = fake_server(formats=("json_object",))
    with pytest.raises(
        BenchregError,
        match=r"refuses structured output .*json_schema form.*"
        r"HTTP 400",
    ) as info:
        preflight(chat_cfg(server.base_url, structured="json_schema"))
    assert "model.structured=json_object" in str(info.value)
    assert preflight(chat_cfg(server.base_url, structured="json_object"))["checked"].endswith(
        "structured output (json_object)"
    )


def test_a_server_that_ignores_the_form_is_one_clear_error(fake_server) -> None:
    server = fake_server(formats=(), ignore_format=True)
    with pytest.raises(BenchregError, match=r"ignores `response_format`"):
        preflight(chat_cfg(server.base_url, structured="json_schema"))


def test_a_refusal_in_the_run_stops_it_with_one_line(fake_server) -> None:
    server = fake_server(formats=("json_object",))
    cfg = chat_cfg(server.base_url, structured="json_schema", preflight=False, max_retries=0)
    with pytest.raises(BenchregError, match=r"refuses `response_format` \(json_schema form\)"):
        run("molp2s/gap", cfg, limit=4)


def test_structured_output_needs_the_chat_endpoint() -> None:
    cfg = chat_cfg("http://127.0.0.1:9/v1", structured="json_schema", endpoint="completions")
    with pytest.raises(BenchregError, match="needs the chat endpoint"):
        run("molp2s/gap", cfg, limit=1)


def _follows(value: object, schema: dict) -> bool:
    """A small JSON Schema check of the keywords the answer schemas use."""
    if "enum" in schema:
        return value in schema["enum"]
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return False
        props = schema.get("properties", {})
        if any(key not in value for key in schema.get("required", [])):
            return False
        if schema.get("additionalProperties") is False and set(value) - set(props):
            return False
        return all(_follows(value[k], s) for k, s in props.items() if k in value)
    if kind == "array":
        return isinstance(value, list) and all(_follows(v, schema["items"]) for v in value)
    if kind == "string":
        return isinstance(value, str) and len(value) >= schema.get("minLength", 0)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return True
