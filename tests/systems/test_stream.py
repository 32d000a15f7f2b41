"""Streamed answers (`model.stream`): folded into the answer a whole body gives, usage counted,
and a server that refuses or ignores the stream still answered."""

from __future__ import annotations

import json

import pytest
from loguru import logger

from benchreg.core.types import Status
from benchreg.systems.fake_server import fake_answer
from benchreg.systems.sse import StreamCut, StreamError, merged
from tests.systems.conftest import chat_cfg, predict_direct, requests_for


def _sse(*chunks: object, done: bool = True) -> bytes:
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks]
    return ("".join(lines) + (": ping\n\ndata: [DONE]\n\n" if done else "")).encode()


def test_chat_chunks_fold_into_one_answer() -> None:
    raw = _sse(
        {"model": "m", "choices": [{"delta": {"role": "assistant", "reasoning_content": "hm"}}]},
        {"choices": [{"delta": {"content": '{"a": '}}]},
        {"choices": [{"delta": {"content": "1}"}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}},
    )
    body = merged(raw)
    assert body["choices"][0]["message"] == {
        "role": "assistant",
        "content": '{"a": 1}',
        "reasoning_content": "hm",
    }
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 2} and body["model"] == "m"


def test_text_chunks_and_their_logprobs_fold_too() -> None:
    raw = _sse(
        {"choices": [{"text": "4", "logprobs": {"top_logprobs": [{"4": -0.1}]}}]},
        {"choices": [{"text": "2", "logprobs": {"top_logprobs": [{"2": -0.2}]}}]},
        {"choices": [{"text": "", "finish_reason": "length"}]},
    )
    choice = merged(raw)["choices"][0]
    assert choice["text"] == "42" and choice["finish_reason"] == "length"
    assert choice["logprobs"] == {"top_logprobs": [{"4": -0.1}, {"2": -0.2}]}


def test_a_stream_cut_short_or_failing_is_not_an_answer() -> None:
    with pytest.raises(StreamError, match="the stream ended before the answer did"):
        merged(_sse({"choices": [{"delta": {"content": "hal"}}]}, done=False))
    with pytest.raises(StreamError, match="stream error: out of memory"):
        merged(_sse({"error": {"message": "out of memory"}}))
    with pytest.raises(StreamError, match="empty stream"):
        merged(b"data: [DONE]\n\n")
    with pytest.raises(StreamCut, match="ends a streamed answer early"):
        merged(_sse({"choices": [{"delta": {"role": "assistant"}}]}))


def test_a_server_that_cuts_streams_short_gets_whole_requests(fake_server) -> None:
    server = fake_server(cut_streams=True, latency_s=0.02)
    predictions, report = predict_direct(chat_cfg(server.base_url, concurrency=3), requests_for(6))
    expected = [fake_answer([{"role": "user", "content": f"q question {i}"}]) for i in range(6)]
    assert [p.raw_text for p in predictions] == expected
    assert report.stats["transport"]["stream"] is False and report.stats["retries"] == 0
    assert 1 <= server.counts["stream_cut"] <= 3  # those sent before the first came back cut


def test_streamed_answers_equal_whole_ones(fake_server) -> None:
    server = fake_server(latency_s=0.02, reasoning="let me think")
    requests = requests_for(5)
    streamed, report = predict_direct(chat_cfg(server.base_url), requests)
    whole, _ = predict_direct(chat_cfg(server.base_url, stream=False), requests)
    keys = ("usage", "finish_reason", "reasoning")
    assert [p.raw_text for p in streamed] == [p.raw_text for p in whole]
    assert [[p.metadata.get(k) for k in keys] for p in streamed] == [
        [p.metadata.get(k) for k in keys] for p in whole
    ]
    assert streamed[0].raw_text == fake_answer([{"role": "user", "content": "q question 0"}])
    assert report.stats["transport"]["streamed_answers"] == 5
    assert report.stats["prompt_tokens"] > 0
    assert all(b.get("stream") is True for b in server.bodies[:5])
    assert all("stream" not in b for b in server.bodies[5:])


def test_a_server_that_refuses_the_stream_gets_whole_requests(fake_server) -> None:
    server = fake_server(refuse_stream=True)
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
    try:
        predictions, report = predict_direct(
            chat_cfg(server.base_url, concurrency=1), requests_for(3)
        )
    finally:
        logger.remove(sink)
    assert [p.status for p in predictions] == [Status.OK] * 3
    assert all(p.metadata["attempts"] == 1 for p in predictions)
    assert server.counts["stream_refused"] == 1 and report.stats["transport"]["stream"] is False
    assert len([line for line in lines if "does not stream answers whole" in line]) == 1


def test_a_stream_without_usage_is_said_once(fake_server) -> None:
    server = fake_server(stream_usage=False)
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
    try:
        predictions, report = predict_direct(chat_cfg(server.base_url), requests_for(4))
    finally:
        logger.remove(sink)
    assert all(p.status is Status.OK and p.metadata["usage"] == {} for p in predictions)
    assert report.stats["transport"]["streamed_without_usage"] == 4
    assert len([line for line in lines if "sends no token usage" in line]) == 1
