"""One OpenAI-compatible chat-completions call, with retries (needs the `models` extra: httpx)."""

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
    """POSTs chat completions to ``{base_url}/chat/completions`` and retries what is retryable."""

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
            base_url=config.endpoint,
            headers=headers,
            timeout=httpx.Timeout(config.timeout_s),
            limits=httpx.Limits(
                max_connections=config.concurrency, max_keepalive_connections=config.concurrency
            ),
        )

    async def complete(self, messages: Sequence[Mapping[str, str]]) -> Completion | Failure:
        body = {"model": self.config.model, "messages": list(messages)}
        body.update(self.config.generation())
        start = time.perf_counter()
        retries = self.config.max_retries
        for attempt in range(1, retries + 2):
            await self._limiter.wait()
            self.counters.attempts += 1
            tic = time.perf_counter()
            try:
                completion = await self._attempt(body)
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

    async def _attempt(self, body: Mapping[str, Any]) -> Completion:
        try:
            async with asyncio.timeout(self.config.timeout_s):
                response = await self._http.post("/chat/completions", json=body)
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
        return text.replace(self._secret, "***") if self._secret else text

    async def aclose(self) -> None:
        await self._http.aclose()


def _parse_completion(response: httpx.Response) -> Completion:
    try:
        data = response.json()
        choice = data["choices"][0]
        message = choice["message"]
        text = message.get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        snippet = response.text[:80].replace("\n", " ")
        raise AttemptFailed(f"unusable response body: {snippet!r}", retryable=True) from None
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Completion(
        text=text if isinstance(text, str) else "",
        finish_reason=choice.get("finish_reason"),
        usage={k: int(v) for k, v in usage.items() if isinstance(v, int)},
        latency_s=0.0,
    )


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
