"""Requests flow through a window of `model.concurrency` from the first sample to the last (no
batch waits for its slowest answer), a request queued inside a busy server is never abandoned
and sent again, and the window backs off when the server pushes back, then recovers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

from benchreg import RunOptions, load_task
from benchreg.core.progress import Progress
from benchreg.core.run import RunOutput, _predict, evaluate
from benchreg.core.types import Prediction, Status
from benchreg.systems.window import AdaptiveWindow
from tests.systems.conftest import build_system, chat_cfg, predict_direct, requests_for, run


def _first_prompt_is_slow() -> tuple[list[str], Any]:
    """A ``slow_if`` for the fake server: the first prompt it sees (and only it) is slow."""
    slow: list[str] = []

    def first(messages: list[dict[str, Any]]) -> bool:
        if not slow:
            slow.append(messages[-1]["content"])
        return messages[-1]["content"] == slow[0]

    return slow, first


def test_a_slow_answer_holds_no_other_request(fake_server, tmp_path: Path) -> None:
    slow, first = _first_prompt_is_slow()
    server = fake_server(latency_s=0.02, slow_if=first, slow_s=1.5)
    options = RunOptions(n_boot=0, cache="off", progress=False, batch_size=2)
    evaluation = evaluate(
        load_task("molp2s/gap"),
        view=None,
        system_cfg=chat_cfg(server.base_url, concurrency=4, timeout_s=3),
        roots={},
        options=options,
        output=RunOutput(tmp_path / "run"),
    )
    lines = (tmp_path / "run" / "journal.jsonl").read_text().splitlines()
    contents = [json.loads(line)["metadata"]["messages"][-1]["content"] for line in lines]
    n = len(evaluation.result.samples)
    # every other sample went through the three free places and reached the journal while the
    # slow one was generated; run.batch_size=2 bounded nothing
    assert len(contents) == n and contents[-1] == slow[0] and contents.count(slow[0]) == 1
    assert server.max_in_flight == 4
    assert server.chat_requests == n


def test_the_system_gets_every_request_in_one_call(fake_server) -> None:
    calls: list[int] = []
    server = fake_server()
    system = build_system(chat_cfg(server.base_url, concurrency=3))
    predict = system.predict

    async def counted(requests: Any) -> list[Prediction]:
        calls.append(len(requests))
        return await predict(requests)

    system.predict = counted  # our own system, watched: how the core hands requests over
    requests = requests_for(10)

    async def go() -> list[Prediction]:
        try:
            options = RunOptions(batch_size=2, progress=False)
            bar = Progress("x", len(requests), enabled=False)
            return await _predict(system, requests, options, None, None, bar)
        finally:
            await system.aclose()

    answers = asyncio.run(go())
    assert calls == [10] and [a.status for a in answers] == [Status.OK] * 10


def test_workers_not_tasks_per_request(fake_server) -> None:
    """2,000 requests: never more tasks than the window's workers and a few of the loop's."""
    server = fake_server()
    most: list[int] = []

    def seen(_: Prediction) -> None:
        most.append(len(asyncio.all_tasks()))

    predictions, report = predict_direct(
        chat_cfg(server.base_url, concurrency=8), requests_for(2000), on_answer=seen
    )
    assert len(predictions) == 2000 and all(p.status is Status.OK for p in predictions)
    # the workers, aiohttp's body writer of each request in flight, the watchdog and the main
    # task: one task per request would be 2,000
    assert len(most) == 2000 and max(most) <= 2 * 8 + 4
    assert report.stats["requests"] == 2000 == server.chat_requests


@pytest.mark.parametrize("streams", [True, False])
def test_a_request_queued_in_a_one_at_a_time_server_is_never_sent_twice(
    fake_server, streams: bool
) -> None:
    # each answer takes 0.3 s, one at a time: the 4th request of a window of 4 waits 0.9 s in
    # the server's queue, past the 0.5 s timeout; the server hears from the others meanwhile
    server = fake_server(one_at_a_time=True, latency_s=0.3, streams=streams)
    cfg = chat_cfg(server.base_url, concurrency=4, timeout_s=0.5, max_retries=3)
    predictions, report = predict_direct(cfg, requests_for(6))
    assert [p.status for p in predictions] == [Status.OK] * 6
    assert len(server.generations) == 6 and set(server.generations.values()) == {1}
    assert server.chat_requests == 6
    assert report.stats["retries"] == 0 and report.stats["concurrency"]["cuts"] == 0
    assert report.stats["transport"]["streamed_answers"] == (6 if streams else 0)


def test_a_streamed_answer_longer_than_the_timeout_is_kept(fake_server) -> None:
    server = fake_server(latency_s=1.2)  # halfway, the first half of the answer arrives
    cfg = chat_cfg(server.base_url, timeout_s=0.8, max_retries=0)
    [prediction], _ = predict_direct(cfg, requests_for(1))
    assert prediction.status is Status.OK and prediction.metadata["attempts"] == 1
    assert server.chat_requests == 1


def test_without_a_stream_the_same_answer_is_a_timeout(fake_server) -> None:
    server = fake_server(latency_s=1.2)
    cfg = chat_cfg(server.base_url, timeout_s=0.8, max_retries=0, stream=False)
    [prediction], report = predict_direct(cfg, requests_for(1))
    assert prediction.status is Status.ERROR
    assert prediction.detail == "timeout after 0.8s"
    assert report.stats["concurrency"]["pushbacks"] == {"timeout": 1}


def test_a_server_that_says_nothing_times_out(silent_server: str) -> None:
    cfg = chat_cfg(silent_server, timeout_s=0.3, max_retries=1, preflight=False)
    [prediction], report = predict_direct(cfg, requests_for(1))
    assert prediction.status is Status.ERROR
    assert prediction.detail == "timeout after 0.3s after 2 attempts"
    assert report.stats["requests"] == 2


@pytest.mark.parametrize("status", [429, 503])
def test_the_window_backs_off_when_the_server_pushes_back_and_recovers(
    fake_server, status: int
) -> None:
    server = fake_server(latency_s=0.02, busy_limit=2, busy_status=status)
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
    answered: list[str] = []

    def calm_down(prediction: Prediction) -> None:
        answered.append(prediction.sample_id)
        if len(answered) == 30:
            server.busy_limit = None  # the load went away

    cfg = chat_cfg(server.base_url, concurrency=12, max_retries=30)
    try:
        predictions, report = predict_direct(cfg, requests_for(150), on_answer=calm_down)
    finally:
        logger.remove(sink)
    window = report.stats["concurrency"]
    assert all(p.status is Status.OK for p in predictions)
    assert server.counts[f"busy:{status}"] >= 1
    assert window["cuts"] >= 1 and window["pushbacks"][f"HTTP {status}"] >= 1
    assert window["lowest"] <= 3  # halved from 12 down to what the server took
    assert window["final"] >= window["lowest"] + 4  # grew back once the load went away
    pushed = [line for line in lines if "pushes back" in line]
    assert len(pushed) == 1 and f"HTTP {status}" in pushed[0] and "lowered from 12" in pushed[0]


def test_the_backoff_reaches_metrics_json(fake_server, tmp_path: Path) -> None:
    server = fake_server(latency_s=0.02, busy_limit=1)
    options = RunOptions(n_boot=0, cache="off", progress=False)
    cfg = chat_cfg(server.base_url, concurrency=6, max_retries=30)
    evaluation = evaluate(
        load_task("molp2s/gap"),
        view=None,
        system_cfg=cfg,
        roots={},
        options=options,
        output=RunOutput(tmp_path / "run"),
    )
    stats = json.loads((tmp_path / "run" / "metrics.json").read_text())["system"]["stats"]
    assert evaluation.result.statuses["error"] == 0
    assert stats["concurrency"]["configured"] == 6 and stats["concurrency"]["cuts"] >= 1
    assert stats["concurrency"]["pushbacks"]["HTTP 429"] >= 1


def test_batch_size_does_not_bound_the_window(fake_server) -> None:
    server = fake_server(latency_s=0.05)
    result = run("molp2s/gap", chat_cfg(server.base_url, concurrency=8), batch_size=1)
    assert result.statuses["error"] == 0 and server.max_in_flight == 8


# --- the window itself ------------------------------------------------------------------------


def test_refusals_to_requests_sent_before_a_cut_cut_once() -> None:
    async def go() -> AdaptiveWindow:
        window = AdaptiveWindow(16)
        started = [await window.acquire() for _ in range(16)]
        for at in started:  # a burst: every request of the round refused
            window.release(at, pushback="HTTP 429")
        assert window.allowed == 8 and window.cuts == 1
        again = await window.acquire()
        window.release(again, pushback="HTTP 429")  # sent after the cut: cuts again
        return window

    window = asyncio.run(go())
    assert window.allowed == 4 and window.cuts == 2 and window.pushbacks["HTTP 429"] == 17


def test_answers_grow_the_window_back_to_the_ceiling() -> None:
    async def go() -> AdaptiveWindow:
        window = AdaptiveWindow(8)
        window.release(await window.acquire(), pushback="timeout")
        assert window.allowed == 4
        for _ in range(200):
            window.release(await window.acquire(), ok=True)
        return window

    window = asyncio.run(go())
    assert window.allowed == 8 and window.lowest == 4


def test_a_waiter_gets_a_freed_place_and_a_cancelled_one_gives_it_back() -> None:
    async def go() -> tuple[int, int]:
        window = AdaptiveWindow(1)
        first = await window.acquire()
        waiting = asyncio.ensure_future(window.acquire())
        cancelled = asyncio.ensure_future(window.acquire())
        await asyncio.sleep(0)
        cancelled.cancel()
        window.release(first, ok=True)
        await waiting
        in_flight = window.in_flight
        window.release(waiting.result(), ok=True)
        await asyncio.gather(cancelled, return_exceptions=True)
        return in_flight, window.in_flight

    assert asyncio.run(go()) == (1, 0)


def test_a_sink_that_fails_stops_the_run_with_its_error(fake_server) -> None:
    server = fake_server(latency_s=0.01)
    seen: list[str] = []

    def full_disk(prediction: Prediction) -> None:
        seen.append(prediction.sample_id)
        if len(seen) == 3:
            raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space left"):
        predict_direct(
            chat_cfg(server.base_url, concurrency=2), requests_for(40), on_answer=full_disk
        )
    assert server.chat_requests < 40  # stopped, not run to the end with the error swallowed
