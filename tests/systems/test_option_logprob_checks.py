"""Log-probabilities are checked before they become option probabilities (issue 37, item 4): a
positive, NaN or infinite log-probability, or alternatives summing past 1, is a server error for
its sample (status `error`, counted by cause), never normalised into plausible probabilities."""

from __future__ import annotations

import asyncio
import math

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.outputs import error_causes
from benchreg.core.scoring import BOUNDED_SHARE
from benchreg.core.types import Choices
from benchreg.systems.choices import BAD_LOGPROBS, bad_logprobs, score_options
from benchreg.systems.completion import Completion, Failure
from tests.systems.conftest import chat_cfg, preflight, run

FOUR = Choices((0, 1, 2, 3), ("0", "1", "2", "3"), '{"i":', "}")


@pytest.mark.parametrize(
    ("top", "why"),
    [
        ({"1": 2.44, "2": -1.0}, "has log-probability 2.44"),
        ({"1": math.nan, "2": -1.0}, "has log-probability nan"),
        ({"1": math.inf}, "has log-probability inf"),
        ({"1": -math.inf, "2": -0.1}, "has log-probability -inf"),
        ({"1": 0.0, "2": 0.0, "3": -0.1}, "sum to"),  # each <= 0, together 2.9
    ],
)
def test_a_broken_distribution_is_a_failure_of_its_sample(top: dict, why: str) -> None:
    reason = bad_logprobs(top)
    assert reason is not None and why in reason
    assert "logprob" not in reason  # that word would stop the whole run as "no log-probabilities"

    async def ask(prompt: str) -> Completion:
        return Completion("", "length", {}, 0.01, attempts=1, logprobs=[top])

    failed = asyncio.run(score_options(ask, "P", FOUR))
    assert isinstance(failed, Failure) and failed.reason.startswith(f"{BAD_LOGPROBS}: ")
    assert failed.attempts == 1


def test_a_distribution_within_rounding_is_accepted() -> None:
    assert bad_logprobs({"1": 1e-7, "2": math.log(1e-4)}) is None  # float16 rounding of 0
    assert bad_logprobs({"1": math.log(0.6), "2": math.log(0.4)}) is None


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
@pytest.mark.parametrize("bad", [2.44, math.nan, math.inf, -math.inf])
def test_a_server_sending_broken_logprobs_leaves_its_samples_failed(
    fake_server, endpoint: str, bad: float
) -> None:
    server = fake_server(bad_logprob=bad, bad_logprob_every=4)
    cfg = chat_cfg(
        server.base_url, scoring="logprobs", endpoint=endpoint, preflight=False, max_retries=0
    )
    result = run("molp2s/gap", cfg)
    assert server.counts["bad_logprobs"] > 0
    failed = [p for p in result.predictions if p.status.value == "error"]
    assert failed and result.complete is False
    assert error_causes(result.failed) == {BAD_LOGPROBS: len(result.failed)}
    for prediction in result.predictions:
        if prediction.status.value != "error":  # the others: a real distribution over options
            assert 0 < prediction.metadata["option_mass"] <= 1 + 1e-9
            assert math.isclose(sum(prediction.metadata["option_probs"]), 1.0, abs_tol=1e-6)


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
@pytest.mark.parametrize("bad", [11.5, math.nan])
def test_the_endpoint_check_refuses_a_server_whose_logprobs_are_broken(
    fake_server, endpoint: str, bad: float
) -> None:
    server = fake_server(bad_logprob=bad)  # every answer: every sample would fail alike
    cfg = chat_cfg(server.base_url, scoring="logprobs", endpoint=endpoint)
    with pytest.raises(BenchregError, match=rf"sends {BAD_LOGPROBS}, which .* cannot score"):
        preflight(cfg)


@pytest.mark.parametrize("hidden", [(), ("0", "1", "2", "3", "4", "5", "6")])
def test_options_missing_from_top_logprobs_are_counted_and_warned_about(
    fake_server, warnings: list[str], hidden: tuple[str, ...]
) -> None:
    server = fake_server(hide_tokens=hidden)
    cfg = chat_cfg(server.base_url, scoring="logprobs", endpoint="completions")
    result = run("molp2s/gap", cfg)
    bounded = [p.metadata["options_bounded"] for p in result.predictions]
    scored = sum(len(p.metadata["option_probs"]) for p in result.predictions)
    detail = result.metrics["option_mass"].detail
    assert detail["options_bounded"] == sum(bounded) and detail["options_scored"] == scored
    assert detail["samples_with_bounded"] == sum(1 for b in bounded if b)
    assert detail["bounded_warn_share"] == BOUNDED_SHARE
    said = [line for line in warnings if "are upper bounds" in line]
    if hidden:
        assert detail["share_bounded"] > BOUNDED_SHARE and len(said) == 1
        assert "raise model.top_logprobs" in said[0]
    else:
        assert detail["share_bounded"] <= BOUNDED_SHARE and not said
