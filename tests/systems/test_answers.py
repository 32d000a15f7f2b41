"""What a chat system hands on: each answer as it arrives (journaled by the core before the batch
ends), `finish_reason` on every prediction, and no API key anywhere (echoed or not)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from benchreg import RunOptions, load_task
from benchreg.core import provenance
from benchreg.core.errors import BenchregError
from benchreg.core.run import RunOutput, evaluate
from benchreg.core.types import Prediction, Status
from benchreg.systems.cache import FILE_NAME
from benchreg.systems.chat_config import ChatConfig, parse_config
from tests.systems.conftest import chat_cfg, predict_direct, requests_for

KEY = "sk-echoed-0123456789abcdefghij"


def test_each_answer_is_handed_on_as_it_arrives(fake_server) -> None:
    server = fake_server(latency_s=0.05)
    seen: list[tuple[str, int]] = []
    sink = lambda p: seen.append((p.sample_id, server.chat_requests))  # noqa: E731
    predictions, _ = predict_direct(
        chat_cfg(server.base_url, concurrency=1), requests_for(4), on_answer=sink
    )
    # one at a time: the n-th answer is handed on when the server has seen n requests
    assert seen == [(f"q{i}", i + 1) for i in range(4)]
    assert [p.sample_id for p in predictions] == ["q0", "q1", "q2", "q3"]


def test_cached_answers_are_handed_on_before_any_request(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    cfg = chat_cfg(server.base_url, concurrency=1)
    predict_direct(cfg, requests_for(2), cache="read_write", cache_dir=tmp_path)
    seen: list[tuple[str, bool, int]] = []

    def sink(p: Prediction) -> None:
        seen.append((p.sample_id, p.metadata["cached"], server.chat_requests))

    predict_direct(cfg, requests_for(3), cache="read_write", cache_dir=tmp_path, on_answer=sink)
    assert seen == [("q0", True, 2), ("q1", True, 2), ("q2", False, 3)]


def test_a_run_stopped_mid_batch_keeps_every_answer_and_resumes(
    fake_server, tmp_path: Path
) -> None:
    """A server that dies after 6 answers: the stop-early line, 6 answers in the journal although
    the batch never ended, and the same command on a healthy server asks only the rest."""
    task = load_task("molp2s/gap")
    options = RunOptions(n_boot=0, cache="off", progress=False, batch_size=64)
    folder = tmp_path / "run"
    dying = fake_server(fail_after=6)
    rule = {"min_requests": 10, "max_error_rate": 0.3}
    cfg = chat_cfg(dying.base_url, concurrency=1, max_retries=0, stop_early=rule)

    def go(cfg: dict) -> object:
        return evaluate(
            task, view=None, system_cfg=cfg, roots={}, options=options, output=RunOutput(folder)
        )

    with pytest.raises(BenchregError, match=r"stopped early: 4 of 10 requests"):
        go(cfg)
    rows = [json.loads(line) for line in (folder / "journal.jsonl").read_text().splitlines()]
    ok = [row for row in rows if row["status"] != "error"]
    assert len(ok) == 6 and len(rows) == 10  # every answer, and the 4 failures for the record

    dying.stop()
    healthy = fake_server(port=dying.port)  # the server is back, at the same address
    evaluation = go(cfg)
    result = evaluation.result
    assert result is not None and result.statuses["error"] == 0
    assert healthy.chat_requests == len(result.samples) - 6  # only what was not answered
    clean = fake_server()
    reference = evaluate(
        task,
        view=None,
        system_cfg={**cfg, "base_url": clean.base_url},
        roots={},
        options=options,
    ).result
    assert reference is not None
    assert [p.raw_text for p in result.predictions] == [p.raw_text for p in reference.predictions]
    assert result.metrics["accuracy"].value == reference.metrics["accuracy"].value


def test_finish_reason_is_on_every_prediction(fake_server, tmp_path: Path) -> None:
    server = fake_server(
        finish_reason="length", reject_if=lambda m: "question 2" in m[-1]["content"]
    )
    cfg = chat_cfg(server.base_url)
    fresh, _ = predict_direct(cfg, requests_for(3), cache="read_write", cache_dir=tmp_path)
    again, _ = predict_direct(cfg, requests_for(3), cache="read_write", cache_dir=tmp_path)
    assert [p.metadata["finish_reason"] for p in fresh] == ["length", "length", None]
    assert [p.metadata["cached"] for p in again] == [True, True, False]
    assert [p.metadata["finish_reason"] for p in again] == ["length", "length", None]
    assert again[2].status is Status.ERROR


def test_an_echoed_key_reaches_neither_answers_nor_cache(
    fake_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = fake_server(echo_key=True)
    monkeypatch.setenv("BENCHREG_ECHO_KEY", KEY)
    cfg = chat_cfg(server.base_url, api_key_env="BENCHREG_ECHO_KEY")
    predictions, report = predict_direct(
        cfg, requests_for(3), cache="read_write", cache_dir=tmp_path
    )
    assert server.authorization == {f"Bearer {KEY}"}
    for prediction in predictions:
        assert KEY not in prediction.raw_text
        assert f"Bearer {provenance.REDACTED}" in prediction.raw_text
    db = sqlite3.connect(tmp_path / FILE_NAME)
    stored = " ".join(row[0] for row in db.execute("SELECT response FROM responses"))
    db.close()
    assert KEY not in stored and provenance.REDACTED in stored
    assert KEY not in json.dumps(report.stats)
    # registered with the core, which scrubs it from every file it writes
    assert provenance.scrub(f"x {KEY} y") == f"x {provenance.REDACTED} y"


@pytest.mark.parametrize(
    "value",
    [
        "sk-proj-abcdefghijklmnop0123456789",  # a key by its form
        "abcdef0123456789ABCDEF0123",  # letters and digits, no underscore: a token
        "my key",  # not a name at all
        "${oc.env:SOME_VAR}",  # an interpolation resolves to the value
        "0123456789abcdef",  # a name cannot start with a digit
    ],
)
def test_a_value_where_the_variable_name_belongs_is_refused_unshown(value: str) -> None:
    with pytest.raises(BenchregError) as info:
        parse_config(ChatConfig, chat_cfg("http://127.0.0.1:8000/v1", api_key_env=value))
    message = str(info.value)
    assert "model.api_key_env must name an environment variable" in message
    assert value not in message and "(the value is not shown)" in message


def test_the_value_of_a_set_variable_is_recognised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHREG_SOME_KEY", "shortKEYvalue1")
    with pytest.raises(BenchregError) as info:
        parse_config(ChatConfig, chat_cfg("http://127.0.0.1:8000/v1", api_key_env="shortKEYvalue1"))
    assert "set model.api_key_env=BENCHREG_SOME_KEY" in str(info.value)
    assert "shortKEYvalue1" not in str(info.value)


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "my_key", "_K1", None])
def test_ordinary_variable_names_are_accepted(name: str | None) -> None:
    config = parse_config(ChatConfig, chat_cfg("http://127.0.0.1:8000/v1", api_key_env=name))
    assert config.api_key_env == name


def test_the_cache_never_stores_a_registered_secret(tmp_path: Path) -> None:
    from benchreg.systems.cache import CacheSettings, ResponseCache

    secret = "registered-secret-value-42"
    provenance.register_secret(secret)
    cache = ResponseCache(CacheSettings("read_write", tmp_path / FILE_NAME))
    cache.put("k", {"text": f"the key is {secret}", "finish_reason": "stop"})
    assert cache.get_many(["k"])["k"]["text"] == f"the key is {provenance.REDACTED}"
    cache.close()
    assert secret.encode() not in (tmp_path / FILE_NAME).read_bytes()
