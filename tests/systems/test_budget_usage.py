"""A token budget holds whatever a server says of its usage: none (whole or streamed answers)
is counted as an upper-bound estimate, said once; negative counts are a server error."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg import RunOptions, load_task
from benchreg.core.run import Evaluation, RunOutput, evaluate
from benchreg.core.types import Status
from benchreg.systems.completion import Completion
from benchreg.systems.usage import UsageEstimator, negative_counts
from tests.systems.conftest import chat_cfg, predict_direct, requests_for

BUDGET = 10_000  # 16 MolP2S answers with the server's counts spend about 5,000 tokens


def _budgeted(cfg: dict, folder: Path) -> Evaluation:
    options = RunOptions(n_boot=0, cache="off", progress=False, max_tokens_total=BUDGET)
    return evaluate(
        load_task("molp2s/gap"),
        view=None,
        system_cfg=cfg,
        roots={},
        options=options,
        output=RunOutput(folder),
    )


def test_the_server_s_counts_stay_under_the_budget(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    record = _budgeted(chat_cfg(server.base_url, concurrency=1), tmp_path / "run").record
    assert record["complete"] is True and server.chat_requests == 16
    assert record["system"]["stats"]["usage_estimated"] == 0


@pytest.mark.parametrize("stream", [False, True])
def test_no_usage_is_estimated_and_the_budget_stops_the_run(
    fake_server, tmp_path: Path, warnings: list[str], stream: bool
) -> None:
    server = fake_server(usage_mode="none")
    cfg = chat_cfg(server.base_url, concurrency=1, stream=stream)
    record = _budgeted(cfg, tmp_path / "run").record
    assert record["complete"] is False and "budget reached" in record["incomplete"]["stopped"]
    assert 0 < server.chat_requests < 16
    budget = record["system"]["stats"]["budget"]
    assert budget["completion_tokens"] == 1024 * server.chat_requests  # model.max_tokens each
    assert record["system"]["stats"]["usage_estimated"] == server.chat_requests
    assert record["system"]["stats"]["completion_tokens"] == 0  # the server's counts only
    said = [line for line in warnings if "upper-bound estimate" in line]
    assert len(said) == 1 and "sends no token usage" in said[0]


def test_negative_usage_is_a_server_error_for_that_sample(fake_server, warnings) -> None:
    server = fake_server(usage_mode="negative")
    predictions, report = predict_direct(chat_cfg(server.base_url, stream=False), requests_for(3))
    assert [p.status for p in predictions] == [Status.ERROR] * 3
    assert all("negative token usage from the server" in p.detail for p in predictions)
    assert server.chat_requests == 3  # not retried: the same server sends the same counts
    assert report.stats["errors"] == 3


def test_negative_counts_are_found_in_the_details_too() -> None:
    assert negative_counts({"prompt_tokens": 3, "completion_tokens": -1}) == "completion_tokens=-1"
    nested = {"prompt_tokens": 1, "completion_tokens_details": {"reasoning_tokens": -2}}
    assert negative_counts(nested) == "completion_tokens_details.reasoning_tokens=-2"
    assert negative_counts({"prompt_tokens": 0, "completion_tokens": 5}) is None


def test_the_estimate_fills_only_what_is_missing() -> None:
    estimator = UsageEstimator("http://127.0.0.1:1/v1", max_tokens=None)
    answer = Completion("héllo", "stop", {"prompt_tokens": 4}, 0.1)
    estimator.fill(answer, "ignored: the server counted the prompt")
    assert answer.usage == {"prompt_tokens": 4, "completion_tokens": 6, "estimated": 1}
    whole = Completion("ok", "stop", {"prompt_tokens": 4, "completion_tokens": 1}, 0.1)
    estimator.fill(whole, "x")
    assert "estimated" not in whole.usage and estimator.estimated == 1
