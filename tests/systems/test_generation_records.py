"""Per-task generation settings, full transcripts, the model behind the cache key, latency
without the queue, and reasoning: what reaches the request and what each sample records."""

from __future__ import annotations

from pathlib import Path

import pytest
from loguru import logger

from benchreg.core.task import Task, load_task
from tests.systems.conftest import chat_cfg, predict_direct, requests_for, run


def _task(tmp_path: Path, generation: str) -> Task:
    entry = tmp_path / "tasks" / "molp2s" / "gen.yaml"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(
        "defaults:\n  - /task/_base/molp2s@_here_\n  - _self_\n"
        f"name: molp2s/gen\ndescription: d\ndata: [data/gap]\ngeneration:\n{generation}"
    )
    return load_task("molp2s/gen", [tmp_path])


def test_the_tasks_generation_reaches_the_request_and_model_overrides_it(
    fake_server, tmp_path: Path
) -> None:
    server = fake_server()
    task = _task(
        tmp_path,
        "  max_tokens: 16\n  stop: '}'\n  temperature: 0.3\n  system: Be brief.\n",
    )
    result = run(task, chat_cfg(server.base_url, preflight=False), limit=1)
    body = server.bodies[-1]
    assert body["max_tokens"] == 16 and body["stop"] == ["}"] and body["temperature"] == 0.3
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][0]["content"].startswith("Be brief.\n\nYou are an expert chemist")
    generation = result.system_report.stats["generation"]
    assert generation["from"] == {
        "max_tokens": "task",
        "stop": "task",
        "temperature": "task",
        "system": "task",
        "seed": "default",
    }
    assert result.system_report.stats["identity"]["generation"]["max_tokens"] == 16
    over = run(task, chat_cfg(server.base_url, preflight=False, max_tokens=99), limit=1)
    assert server.bodies[-1]["max_tokens"] == 99
    assert over.system_report.stats["generation"]["from"]["max_tokens"] == "model"
    assert over.system_identity != result.system_identity


def test_without_settings_the_defaults_are_sent(fake_server) -> None:
    server = fake_server()
    result = run("molp2s/gap", chat_cfg(server.base_url, preflight=False), limit=1)
    assert server.bodies[-1]["max_tokens"] == 1024 and server.bodies[-1]["temperature"] == 0.0
    assert "stop" not in server.bodies[-1]
    assert server.bodies[-1]["seed"] == 0  # always sent: a sampled answer can be asked again
    assert result.system_report.stats["generation"]["from"] == {
        "max_tokens": "default",
        "temperature": "default",
        "seed": "default",
    }


def test_each_sample_records_its_transcript(fake_server) -> None:
    server = fake_server(reasoning="Let me think.", served_model="fake-v2", fingerprint="fp_1")
    result = run("molp2s/gap", chat_cfg(server.base_url), limit=2)
    for prediction in result.predictions:
        meta = prediction.metadata
        assert [m["role"] for m in meta["messages"]] == ["system", "user"]
        assert meta["reasoning"] == "Let me think." and meta["reasoning_tokens"] == 3
        assert meta["reasoning_hit_limit"] is False
        assert meta["finish_reason"] == "stop" and meta["usage"]["completion_tokens"] > 0
        assert meta["served_model"] == "fake-v2" and meta["system_fingerprint"] == "fp_1"
        assert prediction.latency_s is not None and meta["queue_s"] >= 0
    stats = result.system_report.stats
    assert stats["reasoning_tokens"] == 6
    assert stats["cache"]["served_by"]["live"] == {"model": "fake-v2", "system_fingerprint": "fp_1"}


def test_reasoning_that_hits_the_token_limit_is_marked(fake_server) -> None:
    server = fake_server(finish_reason="length")
    predictions, _ = predict_direct(chat_cfg(server.base_url), requests_for(1))
    assert "reasoning" not in predictions[0].metadata  # no reasoning at all: nothing to mark
    from benchreg.systems.completion import Completion
    from benchreg.systems.openai import completion_metadata

    cut = completion_metadata(Completion("<think>step 1, step 2", "length", {}, 0.1))
    assert cut["reasoning"] == "step 1, step 2" and cut["reasoning_hit_limit"] is True
    done = completion_metadata(Completion("<think>a</think>{}", "length", {}, 0.1))
    assert done["reasoning_hit_limit"] is False


def test_a_changed_fingerprint_under_a_cached_key_is_warned_about(
    fake_server, tmp_path: Path
) -> None:
    first = fake_server(fingerprint="fp_old")
    cfg = chat_cfg(first.base_url, concurrency=1)
    predict_direct(cfg, requests_for(2), cache="read_write", cache_dir=tmp_path)
    first.stop()
    second = fake_server(port=first.port, fingerprint="fp_new")  # same URL, new model behind it
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(str(m)), level="WARNING")
    try:
        _, report = predict_direct(cfg, requests_for(3), cache="read_write", cache_dir=tmp_path)
    finally:
        logger.remove(sink)
    assert second.chat_requests == 1  # q2 only: the other two came from the cache
    warned = [line for line in lines if "cached answers were given as" in line]
    assert len(warned) == 1 and "fp_old" in warned[0] and "fp_new" in warned[0]
    assert any("fp_old" in note for note in report.notes)


def test_a_revision_keeps_answers_of_two_versions_apart(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    for revision in (None, "2025-01", None, "2025-01", "2025-02"):
        cfg = chat_cfg(server.base_url, revision=revision)
        predict_direct(cfg, requests_for(2), cache="read_write", cache_dir=tmp_path)
    assert server.chat_requests == 6  # three revisions, two prompts each


def test_latency_leaves_out_the_wait_for_a_slot(fake_server) -> None:
    server = fake_server(latency_s=0.1)
    predictions, report = predict_direct(chat_cfg(server.base_url, concurrency=1), requests_for(4))
    latencies = [p.latency_s for p in predictions]
    queued = sorted(p.metadata["queue_s"] for p in predictions)
    assert max(latencies) < 0.3  # each about the server's 0.1 s, however long it waited
    assert queued[-1] > 0.25  # the last one waited for three others
    assert report.stats["queue_p95_s"] > report.stats["queue_p50_s"] >= 0


@pytest.mark.parametrize(
    "bad",
    ["  max_token: 3\n", "  max_tokens: 0\n", "  temperature: -1\n", "  stop: [1, 2]\n"],
)
def test_a_bad_generation_setting_is_located(tmp_path: Path, bad: str) -> None:
    from benchreg.core.errors import BenchregError

    with pytest.raises(BenchregError) as info:
        _task(tmp_path, bad)
    where = str(info.value.where)
    assert where.startswith(str(tmp_path / "tasks" / "molp2s" / "gen.yaml") + ":")
    assert "generation" in info.value.message
