"""model=openai against a fault-injecting server: nothing lost or changed, clear failures."""

from __future__ import annotations

import time

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.types import Status
from benchreg.systems.fake_server import FAULTS, fake_answer
from tests.systems.conftest import chat_cfg, predict_direct, requests_for, run


def _outcome(predictions: list) -> list[tuple]:
    return [(p.sample_id, p.status, p.raw_text) for p in predictions]


@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_is_retried_until_the_answer_comes(fake_server, fault: str) -> None:
    server = fake_server(faults=[fault], fault_first=2)
    [prediction], report = predict_direct(chat_cfg(server.base_url), requests_for(1))
    assert prediction.status is Status.OK
    assert prediction.raw_text == fake_answer([{"role": "user", "content": "q question 0"}])
    assert prediction.metadata["attempts"] == 3
    assert server.chat_requests == 3
    assert report.stats["retries"] == 2 and report.stats["requests"] == 3


def test_retry_after_is_honoured(fake_server) -> None:
    server = fake_server(faults=["429"], fault_first=1, retry_after="1")
    tic = time.perf_counter()
    [prediction], _ = predict_direct(chat_cfg(server.base_url), requests_for(1))
    assert prediction.status is Status.OK and prediction.metadata["attempts"] == 2
    assert time.perf_counter() - tic >= 1.0  # not the 0.01 s backoff


@pytest.mark.slow
def test_faults_at_20_percent_change_nothing(fake_server) -> None:
    requests = requests_for(150)
    clean = fake_server()
    expected, _ = predict_direct(chat_cfg(clean.base_url, concurrency=16), requests)
    faulty = fake_server(fault_rate=0.2, seed=7)
    got, report = predict_direct(chat_cfg(faulty.base_url, concurrency=16), requests)
    assert _outcome(got) == _outcome(expected)
    assert all(p.status is Status.OK for p in got)
    faults = sum(n for kind, n in faulty.counts.items() if kind.startswith("fault:"))
    assert faults >= 20  # ~0.2 * (150 + retries), every kind drawn at least once
    kinds = {k.removeprefix("fault:") for k in faulty.counts if k.startswith("fault:")}
    assert kinds == set(FAULTS)
    # a slow answer past the client's timeout is retried too, so retries >= faults
    assert report.stats["retries"] >= faults
    assert report.stats["requests"] == faulty.chat_requests
    assert report.stats["errors"] == 0 and report.stats["samples"] == 150


@pytest.mark.parametrize(
    ("task", "view"), [("molp2s/gap", "counterfactual"), ("reaction_mc/single_varying", None)]
)
def test_task_runs_through_faults_score_like_a_clean_run(fake_server, task, view) -> None:
    clean = run(task, chat_cfg(fake_server().base_url), view=view)
    faulty = run(task, chat_cfg(fake_server(fault_rate=0.2, seed=3).base_url), view=view)
    assert _outcome(faulty.predictions) == _outcome(clean.predictions)
    assert faulty.statuses == clean.statuses and faulty.statuses["error"] == 0
    assert faulty.metrics[faulty.primary].value == clean.metrics[clean.primary].value
    assert sum(faulty.statuses.values()) == len(faulty.samples)


def test_a_400_marks_only_that_sample(fake_server) -> None:
    server = fake_server(reject_if=lambda messages: "question 3" in messages[-1]["content"])
    predictions, report = predict_direct(chat_cfg(server.base_url), requests_for(6))
    statuses = [p.status for p in predictions]
    assert statuses == [Status.OK] * 3 + [Status.ERROR] + [Status.OK] * 2
    assert predictions[3].detail == "HTTP 400: prompt rejected by policy"
    assert predictions[3].metadata["attempts"] == 1  # not retried
    assert report.stats["errors"] == 1
    assert report.notes == ["1 requests failed: HTTP 400 (1)"]


def test_a_server_that_fails_everything_stops_after_the_first_4(fake_server) -> None:
    server = fake_server(fail_all=503)
    cfg = chat_cfg(server.base_url, max_retries=1, concurrency=4)
    tic = time.perf_counter()
    with pytest.raises(BenchregError) as info:
        predict_direct(cfg, requests_for(200))
    assert time.perf_counter() - tic < 5
    message = str(info.value)
    assert message.startswith("stopped early: 4 of 4 requests to http://127.0.0.1:")
    assert "failed (last: HTTP 503: always failing after 2 attempts)" in message
    assert "check that the server is up" in message
    assert server.chat_requests <= 2 * (4 + 4)  # 4 finished + those in flight


def test_initial_requests_is_configurable_and_the_rate_rule_remains(fake_server) -> None:
    server = fake_server(fail_all=503)
    rule = {"initial_requests": 0, "min_requests": 10, "max_error_rate": 0.8}
    cfg = chat_cfg(server.base_url, max_retries=0, concurrency=1, stop_early=rule)
    with pytest.raises(BenchregError, match=r"stopped early: 10 of 10 requests"):
        predict_direct(cfg, requests_for(50))
    rule["initial_requests"] = 2
    with pytest.raises(BenchregError, match=r"stopped early: 2 of 2 requests"):
        predict_direct({**cfg, "stop_early": rule}, requests_for(50))


def test_one_answer_among_the_first_requests_keeps_the_run_going(fake_server) -> None:
    server = fake_server(reject_if=lambda messages: "question 0" not in messages[-1]["content"])
    cfg = chat_cfg(server.base_url, concurrency=1, stop_early={"min_requests": 8})
    predictions, _ = predict_direct(cfg, requests_for(6))  # 1 ok + 5 failed: under 8 requests
    assert [p.status for p in predictions] == [Status.OK] + [Status.ERROR] * 5


def test_a_wrong_model_name_also_stops_early(fake_server) -> None:
    server = fake_server(reject_if=lambda messages: True)
    with pytest.raises(BenchregError, match=r"stopped early: 4 of 4 requests"):
        predict_direct(chat_cfg(server.base_url), requests_for(100))
    assert server.chat_requests < 20


def test_timeouts_count_as_errors_when_retries_run_out(fake_server) -> None:
    server = fake_server(faults=["hang"], fault_first=2, hang_s=1.0)
    [prediction], _ = predict_direct(
        chat_cfg(server.base_url, max_retries=1, timeout_s=0.2), requests_for(1)
    )
    assert prediction.status is Status.ERROR
    assert prediction.detail == "timeout after 0.2s after 2 attempts"


def test_rate_limit_spaces_requests(fake_server) -> None:
    server = fake_server()
    tic = time.perf_counter()
    predict_direct(chat_cfg(server.base_url, rate_limit=20, concurrency=8), requests_for(11))
    assert time.perf_counter() - tic >= 0.5  # 11 starts at 20/s: >= 10 intervals of 50 ms
