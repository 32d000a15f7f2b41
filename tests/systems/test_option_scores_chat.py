"""Option probabilities over a chat endpoint (issue 36, item 5): an assistant prefill the server
continues (`continue_final_message`), against the fake server's chat log-probabilities. The
run's log loss, Brier score and ECE equal a recomputation, in this file, from the raw
log-probabilities the stand-in sent; a server that ignores, trims or refuses the prefill, or
gives no chat log-probabilities, is one clear line; `option_mass` is summarised and warned on."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import log_loss

from benchreg.core.errors import BenchregError
from benchreg.core.scoring import LOW_MASS_SHARE, LOW_OPTION_MASS, option_mass_summary
from benchreg.core.types import Prediction
from benchreg.systems.prefill import PROBE_PREFILL, PROBE_USER, prefill_verdict
from tests.systems.conftest import chat_cfg, preflight, run

PREFIX = '{"selected_candidate_index":'
TOLERANCE = 1e-9


def _recomputed_probs(conversation: list[Any], sent: list[dict[str, Any]], n: int) -> np.ndarray:
    """P(option) from what the server sent for one sample, by the documented method: each token
    that writes an option's index adds its probability, a white-space token is followed once
    (its branch's digits times its probability); then normalised over the n options."""
    answers = {
        a["messages"][-1]["content"]: a["top"]
        for a in sent
        if a["messages"][:-1] == conversation and a["messages"][-1]["role"] == "assistant"
    }
    raw = np.zeros(n)
    for token, logprob in answers[PREFIX].items():
        if token.strip() == "" and token:
            for digit, inner in answers[PREFIX + token].items():
                if digit.isdigit() and int(digit) < n:
                    raw[int(digit)] += math.exp(logprob) * math.exp(inner)
        elif token.strip().isdigit() and int(token) < n:
            raw[int(token)] += math.exp(logprob)
    return raw / raw.sum()


def _ece_by_hand(confidence: np.ndarray, correct: np.ndarray) -> float:
    """10 equal-width bins, (lo, hi] (the first [0, 0.1]), sum n_b/n |accuracy_b - confidence_b|."""
    bins = np.clip(np.ceil(confidence * 10).astype(int) - 1, 0, 9)
    ece = 0.0
    for b in range(10):
        inside = bins == b
        if inside.any():
            ece += inside.mean() * abs(correct[inside].mean() - confidence[inside].mean())
    return float(ece)


def test_chat_prefill_metrics_equal_a_recomputation_from_the_raw_logprobs(fake_server) -> None:
    server = fake_server()
    result = run("molp2s/gap", chat_cfg(server.base_url, scoring="logprobs"), limit=8)
    assert result.statuses["ok"] == 8 and server.counts["completion"] == 0
    probs, gold = [], []
    for sample, prediction in zip(result.samples, result.predictions, strict=True):
        n = len(sample.input["candidate_completed_smiles"])
        mine = _recomputed_probs(prediction.metadata["messages"], server.logprob_answers, n)
        assert prediction.metadata["option_probs"] == pytest.approx(mine, abs=TOLERANCE)
        assert prediction.metadata["prefill"] == PREFIX
        probs.append(np.pad(mine, (0, 6 - n)))  # 6 columns: the most candidates a sample has
        gold.append(sample.gold)
    p, y = np.array(probs), np.array(gold)
    onehot = np.eye(6)[y]
    metrics = result.metrics
    assert metrics["log_loss"].value == pytest.approx(
        log_loss(y, p, labels=list(range(6))), abs=TOLERANCE
    )
    assert metrics["brier"].value == pytest.approx(
        float(((p - onehot) ** 2).sum(axis=1).mean()), abs=TOLERANCE
    )
    correct = (p.argmax(axis=1) == y).astype(float)
    assert metrics["ece"].value == pytest.approx(
        _ece_by_hand(p.max(axis=1), correct), abs=TOLERANCE
    )
    probes = [b for b in server.bodies if b["messages"][0]["content"] == PROBE_USER]
    asked = [b for b in server.bodies if "logprobs" in b and b not in probes]
    assert len(asked) >= 8
    for body in asked:  # what each sample's request asked (the endpoint check's probes aside)
        assert body["messages"][-1]["role"] == "assistant"
        assert body["continue_final_message"] is True and body["add_generation_prompt"] is False
        assert (body["logprobs"], body["top_logprobs"], body["max_tokens"]) == (True, 20, 1)
    scoring = result.system_report.stats["scoring"]
    assert "assistant prefill" in scoring["method"]


def test_the_endpoint_check_passes_a_server_that_continues_the_prefill(fake_server) -> None:
    server = fake_server()
    found = preflight(chat_cfg(server.base_url, scoring="logprobs"))
    assert found is not None and "after an assistant prefill" in found["checked"]
    probe = next(b for b in server.bodies if b.get("continue_final_message"))
    assert probe["messages"][-1] == {"role": "assistant", "content": PROBE_PREFILL}


@pytest.mark.parametrize(
    ("options", "line"),
    [
        ({"prefill": "ignore"}, r"does not continue an assistant prefill \(it ignores "),
        ({"prefill": "refuse"}, r"refuses it: HTTP 400: Unrecognized request argument"),
        ({"chat_logprobs": False}, r"gives no chat log-probabilities"),
    ],
)
def test_a_server_without_the_prefill_is_one_clear_line(fake_server, options, line) -> None:
    server = fake_server(**options)
    cfg = chat_cfg(server.base_url, scoring="logprobs")
    with pytest.raises(BenchregError, match=line) as caught:
        preflight(cfg)
    assert "model.endpoint=completions" in str(caught.value)  # the way out for base models
    assert "\n" not in str(caught.value)


def test_a_guess_from_the_next_token_alone_is_a_warning(fake_server, warnings) -> None:
    """Where the prompt token counts do not decide (a trimmed prefill is still shorter than a
    closed one), the probe's next-token verdict warns and the run goes on; the trim is caught
    during the run, where the walk would read a position twice."""
    server = fake_server(prefill="trim")
    found = preflight(chat_cfg(server.base_url, scoring="logprobs"))
    assert found is not None
    said = [line for line in warnings if "drops the trailing white space" in line]
    assert len(said) == 1 and "scoring goes on" in said[0], warnings


@pytest.mark.parametrize(
    ("options", "line"),
    [
        ({"prefill": "trim"}, r"drops the trailing white space.*gave the same prompt"),
        ({"prefill": "refuse"}, r"refuses it: HTTP 400"),
        ({"chat_logprobs": False}, r"gives no chat log-probabilities"),
    ],
)
def test_without_the_check_the_run_stops_with_the_same_line(fake_server, options, line) -> None:
    server = fake_server(**options)
    cfg = chat_cfg(server.base_url, scoring="logprobs", preflight=False)
    with pytest.raises(BenchregError, match=line):
        run("molp2s/gap", cfg, limit=2)


@pytest.mark.parametrize(
    ("alternatives", "verdict"),
    [
        ({"2": 0.996, "3": 0.002}, "continues"),
        ({"25": 0.7, " ": 0.2}, "continues"),
        ({" ": 0.993, "\n": 0.002}, "trims"),
        ({" 25": 0.9}, "trims"),
        ({"1": 0.178, "I": 0.048, "2": 0.041, "The": 0.037}, "ignores"),  # llama-cpp-python
    ],
)
def test_the_probe_verdict(alternatives: dict[str, float], verdict: str) -> None:
    logprobs = {token: math.log(p) for token, p in alternatives.items()}
    assert prefill_verdict(logprobs) == verdict


def test_little_option_mass_is_summarised_and_warned_on(fake_server, warnings) -> None:
    """A server that ignores the prefill, the check skipped: the options get under 1% of the
    model's probability (a new reply starts with words), and the run says so."""
    server = fake_server(prefill="ignore")
    cfg = chat_cfg(server.base_url, scoring="logprobs", preflight=False)
    result = run("molp2s/gap", cfg, limit=4)
    masses = [p.metadata["option_mass"] for p in result.predictions]
    summary = result.metrics["option_mass"]
    assert summary.value == pytest.approx(np.mean(masses), abs=TOLERANCE) and summary.n == 4
    assert summary.detail["min"] == pytest.approx(min(masses))
    assert summary.detail["threshold"] == LOW_OPTION_MASS
    assert summary.detail["under_threshold"] == 4 and summary.detail["share_under_threshold"] == 1
    assert max(masses) < 0.01
    said = [line for line in warnings if "little of the model's probability" in line]
    assert len(said) == 1 and "4 of 4 samples" in said[0], warnings


def test_the_option_mass_summary_by_hand(warnings) -> None:
    def pred(mass: float | None) -> Prediction:
        meta = {"option_probs": [1.0]} | ({} if mass is None else {"option_mass": mass})
        return Prediction("x", answer=0, metadata=meta)

    masses = [0.99, 0.9, 0.95, 0.8, 0.97, 0.99, 0.91, 0.93, 0.96, 0.4]  # one of 10 under 0.5
    summary = option_mass_summary([*map(pred, masses), pred(None)], 11, n_boot=0)
    assert summary is not None and summary.value == pytest.approx(np.mean(masses))
    assert (summary.n, summary.denominator) == (10, 11)
    assert summary.detail["min"] == 0.4 and summary.detail["share_under_threshold"] == 0.1
    assert not warnings  # 10% is not more than LOW_MASS_SHARE
    assert LOW_MASS_SHARE == 0.1
    option_mass_summary([*map(pred, masses), pred(0.1)], 11, n_boot=0)
    assert len(warnings) == 1 and "2 of 11 samples" in warnings[0]
    assert option_mass_summary([pred(None)], 1) is None
