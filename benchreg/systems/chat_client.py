"""One OpenAI-compatible chat or text completion call, with retries (needs the `models` extra:
aiohttp).

The transport is one ``aiohttp.ClientSession`` with at most `model.concurrency` connections: its
cost per request stays flat as connections grow (httpx's connection pool does work per request
start and finish that grows with the pool: at 64 connections it used 9 ms of CPU per request
where aiohttp used 0.2 ms, bench/model_client_speed.py). Answers are streamed (``stream: true``,
`model.stream`) so that a long generation shows progress; a server that ignores the field
answers in one body, read the same way. What a request may wait for:

- a connection: at most `model.connect_timeout_s` (nothing listens, a host that drops packets);
- its answer: as long as the server shows life (:class:`benchreg.systems.window.Watchdog`):
  `model.timeout_s` is the longest silence tolerated, not the longest answer;
- a place in the window (:class:`benchreg.systems.window.AdaptiveWindow`), which shrinks when
  the server pushes back and grows again as answers come.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson
from loguru import logger
from yarl import URL

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
from benchreg.systems.sse import StreamCut, StreamError, merged
from benchreg.systems.usage import negative_counts
from benchreg.systems.window import PUSHBACK_STATUSES, AdaptiveWindow, Watch, Watchdog

DETAIL_CHARS = 300
ROUTES = ("/chat/completions", "/completions")
STREAM_FIELDS = {"stream": True, "stream_options": {"include_usage": True}}
JSON_HEADERS = {"Content-Type": "application/json"}


@dataclass(slots=True)
class ClientCounters:
    attempts: int = 0
    retries: int = 0
    errors_by_reason: dict[str, int] = field(default_factory=dict)
    streamed: int = 0  # answers read from a stream
    streamed_without_usage: int = 0  # of those, the ones that carried no token usage


class StreamRefused(AttemptFailed):
    """The server refuses ``stream`` (or ``stream_options``), or cuts streamed answers short:
    ask again in one body, and so from now on."""


class ChatClient:
    """POSTs chat completions to ``{base_url}/chat/completions`` (text completions to
    ``{base_url}/completions``) and retries what is retryable."""

    def __init__(
        self, config: ChatConfig, api_key: str | None, rng: random.Random | None = None
    ) -> None:
        self.config = config
        self._generation = config.generation()  # the same for every request of the run
        self.counters = ClientCounters()
        self.window = AdaptiveWindow(config.concurrency, config.endpoint_url)
        self.stream = config.stream
        self._secret = api_key
        self._rng = rng or random.Random()
        self._limiter = RateLimiter(config.rate_limit)
        self._watchdog = Watchdog(config.timeout_s)
        self._headers = {**JSON_HEADERS}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._urls = {route: URL(config.endpoint_url + route) for route in ROUTES}
        # the proxy variables (http_proxy, no_proxy, ...) read once, as httpx read them: with
        # aiohttp's trust_env they were read again, in a thread, for every request
        self._proxy = env_proxy(config.endpoint_url)
        self._session: aiohttp.ClientSession | None = None
        self._usage_warned = False

    async def complete(
        self, messages: Sequence[Mapping[str, str]], extra: Mapping[str, Any] | None = None
    ) -> Completion | Failure:
        """One chat completion of ``messages`` (``extra``: per-request body fields, e.g. a
        sample's ``response_format`` or a repeat's seed, over the run's generation)."""
        body = {"model": self.config.model, "messages": list(messages)}
        body.update(self._generation)
        body.update(extra or {})
        return await self.post("/chat/completions", body)

    async def complete_text(
        self, prompt: str, extra: Mapping[str, Any] | None = None
    ) -> Completion | Failure:
        """One text completion of ``prompt`` (POST /completions)."""
        body = {"model": self.config.model, "prompt": prompt}
        body.update(self._generation)
        body.update(extra or {})
        return await self.post("/completions", body)

    async def post(self, path: str, body: Mapping[str, Any]) -> Completion | Failure:
        """POST ``body`` to ``path``, retrying what is retryable; the answer or the failure."""
        start = time.perf_counter()
        retries = self.config.max_retries
        attempt = 0
        while True:
            attempt += 1
            await self._limiter.wait()
            try:
                return await self._windowed(path, body, attempt)
            except StreamRefused as refused:
                self._stop_streaming(refused.reason)
                attempt -= 1  # the same request again, in one body: not a retry
                continue
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

    async def _windowed(self, path: str, body: Mapping[str, Any], attempt: int) -> Completion:
        """One attempt, inside the adaptive window; its latency excludes the wait for a place."""
        started = await self.window.acquire()
        ok, pushback = False, None
        try:
            self.counters.attempts += 1
            tic = time.perf_counter()
            completion = await self._attempt(path, body)
            completion.latency_s = time.perf_counter() - tic
            completion.attempts = attempt
            ok = True
            return completion
        except AttemptFailed as failed:
            pushback = failed.pushback
            raise
        finally:
            self.window.release(started, ok=ok, pushback=pushback)

    async def _attempt(self, path: str, body: Mapping[str, Any]) -> Completion:
        stream = self.stream and not body.get("logprobs")  # 1-token option probes: one body
        payload = orjson.dumps({**body, **STREAM_FIELDS} if stream else body)
        try:
            async with asyncio.timeout(None) as deadline:
                watch = self._watchdog.watch(deadline)
                try:
                    data, streamed = await self._exchange(self._urls[path], payload, watch, stream)
                finally:
                    self._watchdog.done(watch)
        except TimeoutError as exc:
            if deadline.expired():
                raise AttemptFailed(
                    f"timeout after {self.config.timeout_s:g}s", retryable=True, pushback="timeout"
                ) from None
            raise AttemptFailed(
                f"connection error: {_transport_reason(exc, self.config.connect_timeout_s)}",
                retryable=True,
            ) from None
        except (aiohttp.ClientError, OSError) as exc:
            reason = _transport_reason(exc, self.config.connect_timeout_s)
            raise AttemptFailed(f"connection error: {reason}", retryable=True) from None
        completion = _parse_completion(data)
        if streamed:
            self._counted_stream(completion)
        return completion

    async def _exchange(
        self, url: URL, payload: bytes, watch: Watch, stream: bool
    ) -> tuple[Any, bool]:
        """POST ``payload`` (asking for a stream or not); the answer's body as parsed JSON (a
        stream folded into one body) and whether it came streamed. Every byte from the server is
        a sign of life."""
        session = self._http()
        post = session.post(url, data=payload, headers=self._headers, proxy=self._proxy)
        async with post as response:
            self._watchdog.heard()
            if response.status != 200:
                raw = await response.read()
                raise _status_failure(response, raw, stream)
            if response.content_type == "text/event-stream":
                chunks = []
                async for chunk in response.content.iter_any():
                    self._watchdog.heard(watch)
                    chunks.append(chunk)
                try:
                    return merged(b"".join(chunks)), True
                except StreamCut as exc:
                    raise StreamRefused(exc.reason, retryable=False) from None
                except StreamError as exc:
                    raise AttemptFailed(exc.reason, retryable=True) from None
            raw = await response.read()
            self._watchdog.heard(watch)
            return _json_body(raw), False

    def _http(self) -> aiohttp.ClientSession:
        """The session, made in the running event loop at the first request."""
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self.config.concurrency)
            timeout = aiohttp.ClientTimeout(sock_connect=self.config.connect_timeout_s)
            self._session = aiohttp.ClientSession(connector=connector, timeout=timeout)
        return self._session

    def _counted_stream(self, completion: Completion) -> None:
        self.counters.streamed += 1
        if completion.usage:
            return
        self.counters.streamed_without_usage += 1
        if not self._usage_warned:
            self._usage_warned = True
            logger.warning(
                f"the server at {self.config.endpoint_url} sends no token usage with streamed "
                "answers (it ignores stream_options.include_usage): token counts stay 0; "
                "model.stream=false asks for whole answers, which carry it"
            )

    def _stop_streaming(self, reason: str) -> None:
        if self.stream:
            self.stream = False
            logger.warning(
                f"the server at {self.config.endpoint_url} does not stream answers whole "
                f"({self._scrub(reason)}): asking for whole answers from now on (set "
                "model.stream=false to skip this try; an answer longer than model.timeout_s "
                "with nothing else answered meanwhile then times out)"
            )

    def _count(self, reason: str) -> None:
        kind = reason.split(":", 1)[0]
        self.counters.errors_by_reason[kind] = self.counters.errors_by_reason.get(kind, 0) + 1

    def _scrub(self, text: str) -> str:
        """Never let the key out, even if a server echoes it back in an error."""
        return text.replace(self._secret, REDACTED) if self._secret else text

    async def aclose(self) -> None:
        await self._watchdog.close()
        if self._session is not None:
            await self._session.close()
            self._session = None


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (None: none, or ``no_proxy`` exempts it)."""
    parts = urlsplit(url)
    if parts.hostname is None or urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme)


def _status_failure(response: aiohttp.ClientResponse, raw: bytes, streamed: bool) -> AttemptFailed:
    """The failure a non-200 answer is: retryable or not, the server's Retry-After, whether it
    is the server pushing back, or a refusal of the stream fields (then asked again without)."""
    status = response.status
    message = _error_message(raw, response.reason or "")
    reason = f"HTTP {status}: {message}"
    if streamed and status in (400, 422) and "stream" in message:
        return StreamRefused(reason, retryable=False)
    return AttemptFailed(
        reason,
        retryable=retryable_status(status),
        retry_after=parse_retry_after(response.headers.get("Retry-After")),
        pushback=f"HTTP {status}" if status in PUSHBACK_STATUSES else None,
    )


def _transport_reason(exc: BaseException, connect_timeout_s: float) -> str:
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return f"no connection within {connect_timeout_s:g}s"
    text = str(exc) or repr(exc)
    return f"{type(exc).__name__}: {text}"


def _json_body(raw: bytes) -> Any:
    """The JSON of a body (orjson; `json` for what only it reads: NaN, -Infinity), or
    AttemptFailed (retryable: a body cut short or a proxy's error page)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(raw)
    except ValueError:
        snippet = raw[:80].decode("utf-8", "replace").replace("\n", " ")
        raise AttemptFailed(f"unusable response body: {snippet!r}", retryable=True) from None


def _parse_completion(data: Any) -> Completion:
    """A chat completion (``choices[0].message``) or a text completion (``choices[0].text``)."""
    try:
        choice = data["choices"][0]
        message = choice.get("message")
        if isinstance(message, dict):
            text = message.get("content")
            reasoning = message.get("reasoning_content") or message.get("reasoning")
        else:
            text, reasoning = choice["text"], None
    except (KeyError, IndexError, TypeError, AttributeError):
        snippet = json.dumps(data, ensure_ascii=False, default=str)[:80]
        raise AttemptFailed(f"unusable response body: {snippet!r}", retryable=True) from None
    usage = data.get("usage")
    negative = negative_counts(usage) if isinstance(usage, dict) else None
    if negative is not None:  # a server bug: no count of this answer can be trusted
        raise AttemptFailed(f"negative token usage from the server ({negative})", retryable=False)
    timings = data.get("timings")
    return Completion(
        text=text if isinstance(text, str) else "",
        finish_reason=choice.get("finish_reason"),
        usage=usage_counts(usage),
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


def _error_message(raw: bytes, reason_phrase: str) -> str:
    """The server's own error message when it sent one, else the start of the body."""
    try:
        data = json.loads(raw)
        error = data.get("error", data) if isinstance(data, dict) else data
        text = error.get("message", error) if isinstance(error, dict) else error
        text = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    except ValueError:
        text = raw.decode("utf-8", "replace")
    text = " ".join(text.split())
    return text[:DETAIL_CHARS] or reason_phrase
