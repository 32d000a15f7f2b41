"""Option probabilities of a choice answer from an endpoint's next-token log-probabilities.

The prompt is the sample's prompt followed by the reply up to where the choice is written
(:class:`benchreg.core.types.Choices`: for MolP2S ``... {"selected_candidate_index":``). One
request with ``max_tokens: 1`` and ``logprobs: K`` gives the model's next-token distribution
there (its K likeliest tokens); each token that writes an option's index (after optional white
space) adds its probability to that option. Where a token is only white space, or only the
first digits of a longer option (``1`` of ``10``), one more request from there follows it
(branches below :data:`MIN_BRANCH` are not followed; at most :data:`MAX_REQUESTS` per sample).
A number continued past every option (``2`` then ``5`` with 4 options) is counted for the option
it starts with. An option that none of the K tokens writes gets the K-th token's probability as
an upper bound (counted in ``bounded``), so no option has probability 0.

The option probabilities are normalised to sum to 1 (over the options); ``mass`` is how much of
the model's probability went to the options before that (1 = the model writes only options).

The prompt ends inside the reply in one of two ways (the walk is the same): a completions
prompt (the messages as plain text for a base model, or a chat template rendered by benchreg for
``model=llama_cpp``), or a chat request whose last message is the reply so far, continued by the
server (``continue_final_message: true, add_generation_prompt: false``: vLLM, SGLang), so an
instruct model behind a chat API is read on its own chat template. Either way every option is
read at the exact position where the index is written, whatever the model would have written
before it, with no constrained decoding (the chat request: :mod:`benchreg.systems.prefill`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from benchreg.core.errors import BenchregError
from benchreg.core.types import Choices
from benchreg.systems.completion import Completion, Failure

MIN_BRANCH = 1e-3  # a white-space or leading-digit branch less likely than this is not followed
MAX_REQUESTS = 8
# A log-probability is at most 0 and the alternatives at one position sum to at most 1; these
# leave room for a server's float rounding (float16 logits), nothing more: a value past them
# (11.5 of "probability" normalised into plausible option probabilities) is a broken answer
LOGPROB_ROUNDING = 1e-6
POSITION_MASS_ROUNDING = 1e-3
BAD_LOGPROBS = "invalid log-probabilities"  # the failure's cause (its detail up to the colon)
_DIGITS = re.compile(r"\d+")

Ask = Callable[[str], Awaitable[Completion | Failure]]


class NoLogprobs(Exception):
    """The endpoint answered without log-probabilities (one clear error for the run)."""


@dataclass(slots=True)
class OptionScores:
    probs: list[float]  # per option, normalised (sum 1)
    mass: float  # unnormalised total of the options (<= 1 up to the server's rounding)
    requests: int
    bounded: int  # options none of the K alternatives wrote (given the K-th one's probability)
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    attempts: int = 0

    @property
    def best(self) -> int:
        return max(range(len(self.probs)), key=self.probs.__getitem__)


@dataclass(slots=True)
class _Node:
    written: str  # text after the prefix so far (white space, digits)
    logprob: float  # of writing it
    digits: str | None  # the number written so far (None: none yet)


async def score_options(ask: Ask, prompt: str, choices: Choices) -> OptionScores | Failure:
    """P(option) for each of ``choices`` after ``prompt`` (which ends where the choice goes)."""
    texts = list(choices.texts)
    found = [0.0] * len(texts)
    floor = [-math.inf] * len(texts)  # the smallest listed alternative where each was possible
    usage: dict[str, int] = {}
    latency = 0.0
    attempts = 0
    requests = 0
    todo = [_Node("", 0.0, None)]
    while todo and requests < MAX_REQUESTS:
        node = todo.pop(0)
        answer = await ask(prompt + node.written)
        requests += 1
        if isinstance(answer, Failure):
            return answer
        attempts += answer.attempts
        latency += answer.latency_s
        for key, value in answer.usage.items():
            usage[key] = usage.get(key, 0) + value
        if not answer.logprobs or not answer.logprobs[0]:
            raise NoLogprobs("the answer holds no log-probabilities (choices[0].logprobs)")
        alternatives = answer.logprobs[0]
        if (bad := bad_logprobs(alternatives)) is not None:
            return Failure(f"{BAD_LOGPROBS}: {bad}", attempts, latency)
        lowest = node.logprob + min(alternatives.values())
        for i, text in enumerate(texts):
            if _possible(node, text):
                floor[i] = max(floor[i], lowest)
        for token, logprob in alternatives.items():
            todo += _follow(node, token, node.logprob + logprob, texts, found)
    mass = sum(found)
    bounded = 0
    for i, p in enumerate(found):
        if p == 0.0:
            bounded += 1
            found[i] = math.exp(floor[i]) if floor[i] > -math.inf else 0.0
    total = sum(found)
    probs = [p / total for p in found] if total > 0 else []  # [] : no option at all
    return OptionScores(probs, mass, requests, bounded, usage, latency, attempts)


def bad_logprobs(alternatives: dict[str, float]) -> str | None:
    """Why a server's next-token alternatives are no probability distribution: a NaN, an
    infinite or a positive log-probability, or alternatives summing to more than 1 (None: they
    are one). Such an answer is a server error for its sample, never scored. The reason avoids
    the word the run-stopping "no log-probabilities" check looks for."""
    for token, logprob in alternatives.items():
        if math.isnan(logprob) or math.isinf(logprob) or logprob > LOGPROB_ROUNDING:
            return f"token {token[:20]!r} has log-probability {logprob!r} (must be finite, <= 0)"
    total = math.fsum(math.exp(logprob) for logprob in alternatives.values())
    if total > 1.0 + POSITION_MASS_ROUNDING:
        return f"the {len(alternatives)} alternatives at one position sum to {total:.4g} (> 1)"
    return None


def invalid_logprobs(endpoint: str, alternatives: dict[str, float]) -> BenchregError | None:
    """The endpoint check's one line for a server whose probe answer is no distribution (every
    sample would fail the same way); None when it is one."""
    bad = bad_logprobs(alternatives)
    if bad is None:
        return None
    return BenchregError(
        f"the server at {endpoint} sends {BAD_LOGPROBS}, which model.scoring=logprobs cannot "
        f"score: {bad}",
        fix="check the server (each must be finite and at most 0, together at most 1), or set "
        "model.scoring=text (model.preflight=false skips this check: each such answer is then "
        "a failed request)",
    )


def _possible(node: _Node, text: str) -> bool:
    return node.digits is None or text.startswith(node.digits)


def _follow(
    node: _Node, token: str, logprob: float, texts: list[str], found: list[float]
) -> list[_Node]:
    """Credit the options ``token`` completes; the branches worth another request."""
    p = math.exp(logprob)
    if node.digits is None:
        body = token.lstrip()
        if not body:  # white space before the number
            if p >= MIN_BRANCH and not node.written.strip() and len(node.written) < 2:
                return [_Node(node.written + token, logprob, None)]
            return []
        match = _DIGITS.match(body)
        if match is None:
            return []  # not a number: no option
        digits, rest = match.group(), body[match.end() :]
    else:
        match = _DIGITS.match(token)
        if match is None:  # the number ended with the previous token
            _credit(node.digits, p, texts, found)
            return []
        digits, rest = node.digits + match.group(), token[match.end() :]
    if rest:
        if rest[0] not in ".eE":  # `2}`, `2,`, `2\n`: the number ends here (`2.5` is none)
            _credit(digits, p, texts, found)
        return []
    if any(t.startswith(digits) and t != digits for t in texts) and p >= MIN_BRANCH:
        return [_Node(node.written + token, logprob, digits)]
    _credit(digits, p, texts, found)
    return []


def _credit(digits: str, p: float, texts: list[str], found: list[float]) -> None:
    for i, text in enumerate(texts):
        if text == digits:
            found[i] += p


def option_record(scores: OptionScores) -> dict[str, Any]:
    """What a sample records of its option scores."""
    return {
        "option_probs": [round(p, 6) for p in scores.probs],
        "option_mass": round(scores.mass, 6),
        "option_requests": scores.requests,
        "options_bounded": scores.bounded,
    }
