"""One OpenAI-compatible chat or text completion call, with retries (needs the `models` extra:
httpx)."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from loguru import logger

from benchreg.core.provenance import REDACTED
from benchreg.systems.chat_config import ChatConfig
from benchreg.systems.completion import Completion, Failure
from benchreg.systems.limits import RateLimiter
from benchreg.systems.retry import (
    AttemptFailed,
    delay_before_retry,
    parse_retry_after,
    retryable_status,
)

DETAIL_CHARS = 300


@dataclass(slots=True)
class ClientCounters:
    attempts: int = 0
    retries: int = 0
    errors_by_reason: dict[str, int] = field(default_factory=dict)


class ChatClient:
    """POSTs chat completions to ``{base_url}/chat/completions`` (text completions to
    ``{base_url}/completions``) and retries what is retryable."""

    def __init__(
        self, config: ChatConfig, api_key: str | None, rng: random.Random | None = None
    ) -> None:
        self.config = config
        self.counters = ClientCounters()
        self._secret = api_key
        self._rng = rng or random.Random()
        self._limiter = RateLimiter(config.rate_limit)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=config.endpoint_url,
            headers=headers,
            timeout=httpx.Timeout(config.timeout_s),
            limits=httpx.Limits(
                max_connections=config.concurrency, max_keepalive_connections=config.concurrency
            ),
        )

    async def complete(
        self, messages: Sequence[Mapping[str, str]], extra: Mapping[str, Any] | None = None
    ) -> Completion | Failure:
        """One chat completion of ``messages`` (``extra``: per-request body fields, e.g. a
        sample's ``response_format`` or a repeat's seed, over the run's generation)."""
        body = {"model": self.config.model, "messages": list(messages)}
        body.update(self.config.generation())
        body.update(extra or {})
        return await self.post("/chat/completions", body)

    async def complete_text(
        self, prompt: str, extra: Mapping[str, Any] | None = None
    ) -> Completion | Failure:
        """One text completion of ``prompt`` (POST /completions)."""
        body = {"model": self.config.model, "prompt": prompt}
        body.update(self.config.generation())
        body.update(extra or {})
        return await self.post("/completions", body)

    async def post(self, path: str, body: Mapping[str, Any]) -> Completion | Failure:
        """POST ``body`` to ``path``, retrying what is retryable; the answer or the failure."""
        start = time.perf_counter()
        retries = self.config.max_retries
        for attempt in range(1, retries + 2):
            await self._limiter.wait()
            self.counters.attempts += 1
            tic = time.perf_counter()
            try:
                completion = await self._attempt(path, body)
            except AttemptFailed as failed:
                reason = self._scrub(failed.reason)
                if not failed.retryable or attempt > retries:
                    self._count(reason)
                    spent = time.perf_counter() - start
                    tries = f" after {attempt} attempts" if attempt > 1 else ""
                    return Failure(f"{reason}{tries}", attempt, spent)
                self.counters.retries += 1
                delay = delay_before_retry(
                    self.config.backoff, attempt - 1, failed.retry_after, self._rng
                )
                logger.debug(f"retry {attempt}/{retries} in {delay:.2f}s: {reason}")
                await asyncio.sleep(delay)
                continue
            completion.latency_s = time.perf_counter() - tic
            completion.attempts = attempt
            return completion
        raise AssertionError("unreachable")  # pragma: no cover

    async def _attempt(self, path: str, body: Mapping[str, Any]) -> Completion:
        try:
            async with asyncio.timeout(self.config.timeout_s):
                response = await self._http.post(path, json=body)
        except (TimeoutError, httpx.TimeoutException):
            raise AttemptFailed(
                f"timeout after {self.config.timeout_s:g}s", retryable=True
            ) from None
        except httpx.TransportError as exc:
            raise AttemptFailed(
                f"connection error: {type(exc).__name__}: {exc}", retryable=True
            ) from None
        if response.status_code != 200:
            raise AttemptFailed(
                f"HTTP {response.status_code}: {_error_message(response)}",
                retryable=retryable_status(response.status_code),
                retry_after=parse_retry_after(response.headers.get("retry-after")),
            )
        return _parse_completion(response)

    def _count(self, reason: str) -> None:
        kind = reason.split(":", 1)[0]
        self.counters.errors_by_reason[kind] = self.counters.errors_by_reason.get(kind, 0) + 1

    def _scrub(self, text: str) -> str:
        """Never let the key out, even if a server echoes it back in an error."""
        return text.replace(self._secret, REDACTED) if self._secret else text

    async def aclose(self) -> None:
        await self._http.aclose()


def _parse_completion(response: httpx.Response) -> Completion:
    """A chat completion (``choices[0].message``) or a text completion (``choices[0].text``)."""
    try:
        data = response.json()
        choice = data["choices"][0]
        message = choice.get("message")
        if isinstance(message, dict):
            text = message.get("content")
            reasoning = message.get("reasoning_content") or message.get("reasoning")
        else:
            text, reasoning = choice["text"], None
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        snippet = response.text[:80].replace("\n", " ")
        raise AttemptFailed(f"unusable response body: {snippet!r}", retryable=True) from None
    timings = data.get("timings")
    return Completion(
        text=text if isinstance(text, str) else "",
        finish_reason=choice.get("finish_reason"),
        usage=usage_counts(data.get("usage")),
        latency_s=0.0,
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
        served_model=data.get("model") if isinstance(data.get("model"), str) else None,
        system_fingerprint=_text_or_none(data.get("system_fingerprint")),
        server_timings=timings if isinstance(timings, dict) else None,
        logprobs=top_logprobs(choice.get("logprobs")),
    )


def usage_counts(usage: Any) -> dict[str, int]:
    """The integer counts of ``usage``, plus ``reasoning_tokens`` from OpenAI's
    ``completion_tokens_details`` (vLLM, SGLang and hosted APIs send it there)."""
    if not isinstance(usage, dict):
        return {}
    out = {k: int(v) for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
    details = usage.get("completion_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("reasoning_tokens"), int):
        out["reasoning_tokens"] = int(details["reasoning_tokens"])
    return out


def top_logprobs(logprobs: Any) -> list[dict[str, float]] | None:
    """Per generated token, its alternatives and their log-probabilities: the completions form
    (``{"top_logprobs": [{token: logprob}]}``) or the chat form (``{"content": [{"token",
    "logprob", "top_logprobs": [{"token", "logprob"}]}]}``). None when the server sent none."""
    if not isinstance(logprobs, dict):
        return None
    if isinstance(logprobs.get("top_logprobs"), list):
        out = []
        for position in logprobs["top_logprobs"]:
            if isinstance(position, dict):
                out.append({str(k): float(v) for k, v in position.items() if _number(v)})
            else:
                out.append({})
        return out
    if isinstance(logprobs.get("content"), list):
        out = []
        for token in logprobs["content"]:
            alternatives = token.get("top_logprobs") if isinstance(token, dict) else None
            position = {
                str(alt["token"]): float(alt["logprob"])
                for alt in alternatives or ()
                if isinstance(alt, dict) and "token" in alt and _number(alt.get("logprob"))
            }
            if isinstance(token, dict) and "token" in token and _number(token.get("logprob")):
                position.setdefault(str(token["token"]), float(token["logprob"]))
            out.append(position)
        return out
    return None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _error_message(response: httpx.Response) -> str:
    """The server's own error message when it sent one, else the start of the body."""
    try:
        data = response.json()
        error = data.get("error", data) if isinstance(data, dict) else data
        text = error.get("message", error) if isinstance(error, dict) else error
        text = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    except ValueError:
        text = response.text
    text = " ".join(text.split())
    return text[:DETAIL_CHARS] or response.reason_phrase
