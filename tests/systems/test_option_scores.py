"""Option probabilities (`model.scoring=logprobs`): the next-token walk of
benchreg.systems.choices on hand-made distributions, the run's probability metrics against the
fake server, and an endpoint without log-probabilities as one clear error."""

from __future__ import annotations

import asyncio
import math

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.scoring import PROB_SUM_TOLERANCE
from benchreg.core.types import Choices
from benchreg.systems.choices import NoLogprobs, score_options
from benchreg.systems.completion import Completion
from tests.systems.conftest import chat_cfg, preflight, run

JSON = Choices(tuple(range(12)), tuple(str(i) for i in range(12)), '{"answer":', "}")


def _walk(table: dict[str, dict[str, float]], choices: Choices = JSON) -> tuple:
    """score_options over a fixed next-token table (probabilities, by what follows the root)."""
    asked: list[str] = []

    async def ask(prompt: str) -> Completion:
        tail = prompt.removeprefix("P" + choices.prefix)
        asked.append(tail)
        top = {k: math.log(v) for k, v in table[tail].items()}
        return Completion("", "length", {"prompt_tokens": 1}, 0.01, logprobs=[top])

    scores = asyncio.run(score_options(ask, "P" + choices.prefix, choices))
    return scores, asked


def test_single_tokens_and_a_space_branch_add_up() -> None:
    two = Choices((0, 1, 2), ("0", "1", "2"), '{"i":', "}")
    table = {"": {" ": 0.5, "0": 0.2, "1": 0.1, "x": 0.2}, " ": {"0": 0.5, "2": 0.3, "9": 0.2}}
    scores, asked = _walk(table, two)
    assert asked == ["", " "]  # the space is followed, once
    raw = [0.2 + 0.5 * 0.5, 0.1, 0.5 * 0.3]
    assert scores.probs == pytest.approx([p / sum(raw) for p in raw])
    assert scores.mass == pytest.approx(sum(raw))
    assert abs(sum(scores.probs) - 1) < PROB_SUM_TOLERANCE
    assert scores.best == 0 and scores.bounded == 0 and scores.usage == {"prompt_tokens": 2}


def test_a_two_digit_option_is_read_past_its_first_digit() -> None:
    table = {
        "": {"1": 0.6, "3": 0.3, "}": 0.1},
        "1": {"}": 0.5, "0": 0.3, "1": 0.2},  # after `1`: ends (option 1), or 10, 11
    }
    scores, asked = _walk(table)
    assert asked == ["", "1"]
    raw = {1: 0.6 * 0.5, 10: 0.6 * 0.3, 11: 0.6 * 0.2, 3: 0.3}
    assert scores.mass == pytest.approx(sum(raw.values()))
    # the 8 options no token wrote get the smallest listed alternative (0.1) as a bound
    assert scores.bounded == 8
    total = sum(raw.values()) + 8 * 0.1
    expected = [raw.get(i, 0.1) / total for i in range(12)]
    assert scores.probs == pytest.approx(expected)
    assert scores.best in (1, 3)  # 0.6 * 0.5 and 0.3 tie


def test_tokens_holding_the_number_and_what_follows_it() -> None:
    table = {"": {" 2}": 0.5, "0,": 0.25, "2.5": 0.25}}  # `2.5` writes no option
    scores, _ = _walk(table, Choices((0, 1, 2), ("0", "1", "2"), '{"i":', "}"))
    assert scores.mass == pytest.approx(0.75)  # 0 and 2 written, `2.5` is none
    assert scores.bounded == 1  # option 1: the smallest listed alternative as its bound
    assert scores.probs == pytest.approx([0.25, 0.25, 0.5])


def test_an_answer_without_logprobs_raises() -> None:
    async def ask(prompt: str) -> Completion:
        return Completion("", "length", {}, 0.0, logprobs=None)

    with pytest.raises(NoLogprobs):
        asyncio.run(score_options(ask, "P", JSON))


@pytest.mark.parametrize("task", ["molp2s/gap", "reaction_mc/all_varying"])
def test_logprob_scoring_reports_probabilities_and_calibration(fake_server, task: str) -> None:
    server = fake_server()
    cfg = chat_cfg(server.base_url, scoring="logprobs", endpoint="completions")
    result = run(task, cfg, limit=3)
    assert result.statuses["ok"] == 3
    for prediction in result.predictions:
        probs = prediction.metadata["option_probs"]
        assert abs(sum(probs) - 1) <= PROB_SUM_TOLERANCE
        assert prediction.answer == probs.index(max(probs))
        assert prediction.metadata["prompt"].endswith(":")  # ends where the index is written
    assert {"log_loss", "brier", "ece"} <= set(result.metrics)
    assert result.metrics["log_loss"].n == 3 and result.metrics["log_loss"].value > 0
    assert len(result.metrics["ece"].detail["reliability"]) == 10
    assert server.counts["chat"] == 0  # completions only
    assert result.system_report.stats["identity"]["generation"]["scoring"] == "logprobs"


def test_logprobs_through_a_chat_api_continue_an_assistant_prefill(fake_server) -> None:
    """Over chat (issue 36): no completions request; the rest is test_option_scores_chat.py."""
    server = fake_server()
    result = run("molp2s/gap", chat_cfg(server.base_url, scoring="logprobs"), limit=1)
    assert result.statuses["ok"] == 1 and server.counts["completion"] == 0
    assert result.predictions[0].metadata["prefill"] == '{"selected_candidate_index":'


def test_logprobs_on_a_task_without_choices_is_refused() -> None:
    cfg = chat_cfg("http://127.0.0.1:9/v1", scoring="logprobs", endpoint="completions")
    with pytest.raises(BenchregError, match=r"needs a choice answer.*'cblue_label'"):
        run("cblue/CHIP-CTC", cfg, limit=1)


def test_an_endpoint_without_logprobs_is_one_clear_error(fake_server) -> None:
    server = fake_server(logprobs=False)
    cfg = chat_cfg(server.base_url, scoring="logprobs", endpoint="completions")
    with pytest.raises(BenchregError, match=r"gives no log-probabilities"):
        preflight(cfg)
    with pytest.raises(BenchregError, match=r"gives no log-probabilities"):
        run("molp2s/gap", {**cfg, "preflight": False}, limit=3)


def test_a_text_completion_endpoint_for_base_models(fake_server) -> None:
    server = fake_server()
    result = run("molp2s/gap", chat_cfg(server.base_url, endpoint="completions"), limit=2)
    assert result.statuses["ok"] == 2 and server.counts["chat"] == 0
    prompt = result.predictions[0].metadata["prompt"]
    messages = result.predictions[0].metadata["messages"]
    assert prompt == "\n\n".join(m["content"] for m in messages) + "\n\n"
