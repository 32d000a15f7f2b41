"""Token usage as a budget counts it: the server's own counts, refused when negative, and an
upper-bound estimate where the server sends none (a budget must hold whatever the server says).

The estimate (documented in docs/models.md, "Budgets"): prompt tokens = the UTF-8 bytes of the
prompt's text (a byte-level tokenizer never makes more tokens than bytes); completion tokens =
`model.max_tokens` per request (the most the server may generate), or the UTF-8 bytes of the
reply and its reasoning when no limit is sent. Real counts are usually 2-4 times lower, so a
budget counted this way stops early rather than late."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from loguru import logger

from benchreg.systems.completion import Completion

COUNTED = ("prompt_tokens", "completion_tokens")
ESTIMATED = "estimated"  # the usage key that marks counts benchreg estimated (1), not the server
RULE = (
    "prompt: one token per UTF-8 byte of its text; completion: model.max_tokens per request, "
    "else one token per UTF-8 byte of the reply"
)


def negative_counts(usage: Mapping[str, Any]) -> str | None:
    """The first negative token count of a server's ``usage`` ("prompt_tokens=-3"), or None."""
    for key, value in usage.items():
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            return f"{key}={value}"
    details = usage.get("completion_tokens_details")
    if isinstance(details, Mapping):
        return negative_counts({f"completion_tokens_details.{k}": v for k, v in details.items()})
    return None


class UsageEstimator:
    """Fills in the counts an answer's usage lacks, marks the usage ``estimated: 1`` and says so
    once per run; :attr:`estimated` counts the answers it filled."""

    def __init__(self, endpoint: str, max_tokens: int | None) -> None:
        self.endpoint = endpoint
        self.max_tokens = max_tokens
        self.estimated = 0

    def fill(self, answer: Completion, prompt_text: str, requests: int = 1) -> None:
        """Estimate the missing counts of ``answer`` (``requests`` requests of ``prompt_text``,
        as option scoring sends one per option, each for one token)."""
        missing = [key for key in COUNTED if key not in answer.usage]
        if not missing:
            return
        estimate = {
            "prompt_tokens": utf8_bytes(prompt_text) * requests,
            "completion_tokens": self._completion_tokens(answer, requests),
        }
        answer.usage = {**answer.usage, **{key: estimate[key] for key in missing}, ESTIMATED: 1}
        self.estimated += 1
        if self.estimated == 1:
            logger.warning(
                f"the server at {self.endpoint} sends no token usage "
                f"({', '.join(missing)} missing): run.max_tokens_total and run.max_cost count an "
                f"upper-bound estimate instead ({RULE}), marked `estimated` in each answer's usage"
            )

    def _completion_tokens(self, answer: Completion, requests: int) -> int:
        if answer.option_probs is not None:  # option probes ask for one token each
            return requests
        if self.max_tokens is not None:
            return self.max_tokens * requests
        return utf8_bytes(answer.text) + utf8_bytes(answer.reasoning or "")


def prompt_text(messages: Sequence[Mapping[str, Any]], prompt: str | None) -> str:
    """What a request sends as its prompt: the text prompt, else every message's content."""
    if prompt is not None:
        return prompt
    return "\n".join(str(message.get("content") or "") for message in messages)


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", "replace"))
