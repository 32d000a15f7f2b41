"""Checking a chat-completions endpoint before the first batch (needs httpx).

One models listing (``GET <base_url>/models``) and, when it does not settle the question, one
minimal chat request (1 token) tell apart: a server that cannot be reached (refused, DNS, no
answer), a key that is missing or refused (401/403), a model the server does not have, a URL that
is not an OpenAI-compatible API (404, a body that is not its JSON) and a server that only fails
(5xx, endless 429). Each is one :class:`BenchregError` naming the cause and the fix, raised before
the run folder is claimed (nothing written, exit 2). Every wait is short: ``min(model.timeout_s,
10 s)`` per request, at most :data:`ATTEMPTS` attempts for a retryable status.
"""

from __future__ import annotations

import asyncio
import errno
import json
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from benchreg.core.errors import BenchregError
from benchreg.core.provenance import REDACTED, redact_text
from benchreg.systems.chat_config import ChatConfig
from benchreg.systems.choices import invalid_logprobs
from benchreg.systems.retry import parse_retry_after, retryable_status

CHECK_TIMEOUT_S = 10.0
ATTEMPTS = 3  # for 429/5xx, within the few seconds the check may take
MAX_WAIT_S = 2.0  # longest pause between attempts (a longer Retry-After is cut to this)
SNIPPET = 120
SHOWN_MODELS = 8
SKIP_HINT = "model.preflight=false skips this check"
DNS_MARKS = (
    "name or service not known",
    "nodename nor servname",
    "getaddrinfo",
    "name resolution",
    "no address associated",
)


@dataclass(slots=True)
class _Answer:
    status: int
    data: Any  # the parsed JSON body, or None
    text: str  # the body's start, one line, secrets removed
    retry_after: float | None = None

    @property
    def message(self) -> str:
        """The server's own error message when it sent one, else the body's start."""
        data = self.data
        error = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(error, dict):  # OpenAI: {"error": {"message"}}; FastAPI: {"detail"}
            error = error.get("message", error.get("detail"))
        if isinstance(error, str) and error:
            return error[:SNIPPET]
        return self.text or "(empty body)"


class EndpointCheck:
    """``await EndpointCheck(config, key).run()`` -> what was found (for the system report).

    Beyond reachability, a run that needs them gets two more short requests: structured output
    (`model.structured`: a tiny schema the reply must follow) and log-probabilities
    (`model.scoring=logprobs`: a 1-token completion with ``logprobs``, or over chat one request
    whose assistant prefill the server must continue). ``served`` holds the
    model and ``system_fingerprint`` the server reported answering (None: not asked)."""

    def __init__(
        self,
        config: ChatConfig,
        api_key: str | None,
        response_format: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.config = config
        self.endpoint = config.endpoint_url
        self.timeout = min(config.timeout_s, CHECK_TIMEOUT_S)
        self.served: dict[str, str | None] | None = None
        # GET /models as answered (status, JSON): the weights probe reads it (no second GET)
        self.listing: tuple[int, Any] | None = None
        self._response_format = response_format
        self._key = api_key
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def run(self) -> dict[str, Any]:
        tic = time.perf_counter()
        checked = []
        async with httpx.AsyncClient(
            base_url=self.endpoint, headers=self._headers, timeout=httpx.Timeout(self.timeout)
        ) as http:
            listed = await self._listed_models(http)
            how = "models listing"
            if listed is None or self.config.model not in listed:
                await self._probe(http, listed)
                how = f"1-token {self._route_name} request"
            checked.append(how)
            if self.config.structured != "off" and self._response_format is not None:
                await self._structured_probe(http)
                checked.append(f"structured output ({self.config.structured})")
            if self.config.scoring == "logprobs" and self.config.endpoint == "chat":
                await self._prefill_probe(http)
                checked.append("log-probabilities after an assistant prefill")
            elif self.config.scoring == "logprobs":
                await self._logprobs_probe(http)
                checked.append("log-probabilities")
        return {
            "checked": ", ".join(checked),
            "models_listed": None if listed is None else len(listed),
            "seconds": round(time.perf_counter() - tic, 3),
        }

    @property
    def _completions(self) -> bool:
        return self.config.endpoint == "completions"

    @property
    def _route(self) -> str:
        return "/completions" if self._completions else "/chat/completions"

    @property
    def _route_name(self) -> str:
        return "completion" if self._completions else "chat"

    def _note_served(self, data: Any) -> None:
        if isinstance(data, dict) and (data.get("model") or data.get("system_fingerprint")):
            self.served = {
                "model": data.get("model") if isinstance(data.get("model"), str) else None,
                "system_fingerprint": data.get("system_fingerprint") or None,
            }

    async def _structured_probe(self, http: httpx.AsyncClient) -> None:
        """A reply under a tiny schema (``{"ok": <bool>}``): refused (HTTP 4xx/5xx) or ignored
        (the reply does not follow it) is one error naming the other forms."""
        assert self._response_format is not None
        schema = {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
            "additionalProperties": False,
        }
        body = {
            "model": self.config.model,
            "messages": [{"role": "user", "content": "Is water wet? Answer in JSON."}],
            **self.config.generation(),
            "max_tokens": 24,
            "response_format": self._response_format(schema),
        }
        answer = await self._request(http, "POST", "/chat/completions", body)
        form = self.config.structured
        fix = (
            "set model.structured=json_object (llama-cpp-python's server takes that form), "
            "json_schema (OpenAI, vLLM, SGLang, llama-server, Ollama), or off "
            f"({SKIP_HINT})"
        )
        if answer.status != 200:
            raise BenchregError(
                f"the server at {self.endpoint} refuses structured output (`response_format` "
                f"in the {form} form): HTTP {answer.status}: {answer.message}",
                fix=fix,
            )
        self._note_served(answer.data)
        try:
            content = answer.data["choices"][0]["message"]["content"]
            followed = isinstance(json.loads(content).get("ok"), bool)
        except (TypeError, KeyError, IndexError, ValueError, AttributeError):
            followed = False
        if not followed:
            raise BenchregError(
                f"the server at {self.endpoint} ignores `response_format` ({form} form): a "
                f'reply that had to be {{"ok": true|false}} was {answer.text[:80]!r}',
                fix=fix,
            )

    async def _prefill_probe(self, http: httpx.AsyncClient) -> None:
        """Option scoring over chat: one request ending in an assistant prefill, which the server
        must continue with log-probabilities (:mod:`benchreg.systems.prefill`)."""
        from benchreg.systems.prefill import check_probe, closed_body, probe_body

        config = self.config
        body = probe_body(config.model, config.generation(), config.top_logprobs)
        answer = await self._request(http, "POST", "/chat/completions", body)
        closed = None
        if answer.status == 200:
            self._note_served(answer.data)
            reopened = await self._request(http, "POST", "/chat/completions", closed_body(body))
            closed = reopened.data if reopened.status == 200 else None
        check_probe(self.endpoint, answer.status, answer.data, answer.message, SKIP_HINT, closed)

    async def _logprobs_probe(self, http: httpx.AsyncClient) -> None:
        body = {
            "model": self.config.model,
            "prompt": "1, 2, 3,",
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": min(5, self.config.top_logprobs),
        }
        answer = await self._request(http, "POST", "/completions", body)
        fix = (
            "use a server whose completions endpoint returns `logprobs` (llama.cpp, vLLM, "
            f"SGLang), or set model.scoring=text ({SKIP_HINT})"
        )
        if answer.status != 200:
            raise BenchregError(
                f"the server at {self.endpoint} gives no log-probabilities: POST /completions "
                f"with logprobs gave HTTP {answer.status}: {answer.message}",
                fix=fix,
            )
        self._note_served(answer.data)
        try:
            listed = answer.data["choices"][0]["logprobs"]["top_logprobs"][0]
            ok = isinstance(listed, dict) and bool(listed)
        except (TypeError, KeyError, IndexError):
            ok = False
        if not ok:
            raise BenchregError(
                f"the server at {self.endpoint} gives no log-probabilities (its completion "
                f"answer has no choices[0].logprobs.top_logprobs: {answer.text[:80]!r})",
                fix=fix,
            )
        numbers = {str(t): float(v) for t, v in listed.items() if isinstance(v, int | float)}
        if (invalid := invalid_logprobs(self.endpoint, numbers)) is not None:
            raise invalid

    # --- the two requests ----------------------------------------------------------------------

    async def _listed_models(self, http: httpx.AsyncClient) -> list[str] | None:
        """The ids the server lists; None when it has no usable listing (the probe decides)."""
        answer = await self._request(http, "GET", "/models")
        self.listing = (answer.status, answer.data)
        if answer.status in (401, 403):
            raise self._refused(answer, "GET /models")
        if answer.status != 200:
            return None  # no listing (404, 405, ...) or failing: the chat request will tell
        data = answer.data
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list):
            return None  # not the OpenAI shape: the chat request will tell
        return [str(item["id"]) for item in items if isinstance(item, dict) and "id" in item]

    async def _probe(self, http: httpx.AsyncClient, listed: list[str] | None) -> None:
        body: dict[str, Any] = {"model": self.config.model, **self.config.generation()}
        if self._completions:
            body["prompt"] = "Reply with OK."
        else:
            body["messages"] = [{"role": "user", "content": "Reply with OK."}]
        body["max_tokens"] = 1
        if "max_completion_tokens" in body:  # newer APIs' name for it, maybe in extra_body
            body["max_completion_tokens"] = 1
        route = self._route
        answer = await self._request(http, "POST", route, body)
        if answer.status == 200:
            if _is_completion(answer.data, text=self._completions):
                self._note_served(answer.data)
                return
            raise BenchregError(
                f"the server at {self.endpoint} does not answer like an OpenAI-compatible API: "
                f"POST {route} gave {answer.text!r}",
                fix="model.base_url should be the API root, e.g. http://<host>:<port>/v1 "
                f"({SKIP_HINT})",
            )
        if answer.status in (401, 403):
            raise self._refused(answer, f"POST {route}")
        if answer.status == 429:
            raise BenchregError(
                f"the server at {self.endpoint} answers HTTP 429 (rate limited) to every "
                f"request: {answer.message}",
                fix="wait until its limit resets, or set model.rate_limit and lower "
                f"model.concurrency ({SKIP_HINT})",
            )
        if answer.status >= 500:
            raise BenchregError(
                f"the server at {self.endpoint} fails: HTTP {answer.status}: {answer.message}",
                fix=f"check the server's log ({SKIP_HINT})",
            )
        if listed is not None or _names_the_model(answer, self.config.model):
            raise self._unknown_model(answer, listed)
        if answer.status in (404, 405):
            what = "text-completions" if self._completions else "chat-completions"
            raise BenchregError(
                f"no {what} API at {self.endpoint}: POST {route} gave "
                f"HTTP {answer.status}: {answer.message}",
                fix="model.base_url should be the API root, e.g. http://<host>:<port>/v1",
            )
        raise BenchregError(
            f"the server at {self.endpoint} refuses a 1-token request with this run's model "
            f"and generation settings: HTTP {answer.status}: {answer.message}",
            fix=f"check model.model, model.extra_body and the generation options ({SKIP_HINT})",
        )

    async def _request(
        self, http: httpx.AsyncClient, method: str, path: str, body: Any = None
    ) -> _Answer:
        """One request, with a few quick attempts for 429/5xx; transport failures are errors."""
        answer = _Answer(0, None, "")
        for attempt in range(1, ATTEMPTS + 1):
            try:
                async with asyncio.timeout(self.timeout):
                    response = await http.request(method, path, json=body)
            except (TimeoutError, httpx.TimeoutException):
                raise self._unreachable(f"no answer within {self.timeout:g}s") from None
            except httpx.TransportError as exc:
                raise self._unreachable(self._transport_reason(exc)) from None
            answer = self._answer(response)
            if not retryable_status(answer.status) or attempt == ATTEMPTS:
                return answer
            await asyncio.sleep(min(MAX_WAIT_S, answer.retry_after or 0.25 * 2**attempt))
        return answer

    # --- errors --------------------------------------------------------------------------------

    def _unreachable(self, reason: str) -> BenchregError:
        return BenchregError(
            f"cannot reach the model server at {self.endpoint}: {reason}",
            fix="start the server, or fix model.base_url (host, port, http/https); to replay "
            "answers the response cache holds without the server, set model.preflight=false",
        )

    def _transport_reason(self, exc: httpx.TransportError) -> str:
        """Refused, DNS, unreachable, TLS, ...: read from the exception and its causes."""
        text = self._scrub(str(exc)) or type(exc).__name__
        host = urlsplit(self.endpoint).hostname
        chain = list(_causes(exc))
        words = " ".join(str(e) for e in chain).lower()
        if any(isinstance(e, socket.gaierror) for e in chain) or any(
            mark in words for mark in DNS_MARKS
        ):
            return f"host {host!r} not found (DNS)"
        if any(isinstance(e, ConnectionRefusedError) for e in chain) or "refused" in words:
            return "connection refused (nothing listens on that port)"
        codes = {getattr(e, "errno", None) for e in chain}
        if codes & {errno.EHOSTUNREACH, errno.ENETUNREACH}:
            return f"host {host!r} unreachable"
        if isinstance(exc, httpx.RemoteProtocolError):
            return f"the server closed the connection without an HTTP answer ({text})"
        if "ssl" in words or "certificate" in words:
            return f"TLS failed ({text}); is it http or https?"
        return f"{type(exc).__name__}: {text}"

    def _refused(self, answer: _Answer, what: str) -> BenchregError:
        variable = self.config.api_key_env
        if variable:
            fix = (
                f"the key in ${variable} (model.api_key_env={variable}) is wrong, expired or "
                "not allowed here: export the right one"
            )
        else:
            fix = (
                "the server needs a key: export it in a variable and name the variable, e.g. "
                "model.api_key_env=OPENAI_API_KEY"
            )
        return BenchregError(
            f"the server at {self.endpoint} refuses the request ({what}: HTTP {answer.status}: "
            f"{answer.message})",
            fix=fix,
        )

    def _unknown_model(self, answer: _Answer, listed: list[str] | None) -> BenchregError:
        model = self.config.model
        if listed:
            shown = ", ".join(listed[:SHOWN_MODELS])
            more = f" and {len(listed) - SHOWN_MODELS} more" if len(listed) > SHOWN_MODELS else ""
            has = f"it serves {shown}{more}"
            fix = "set model.model to one of them"
        elif listed is not None:
            has = "it lists no model"
            fix = "load the model into the server, or check model.base_url"
        else:
            has = "it has no models listing"
            fix = "check model.model against the server's model names"
        return BenchregError(
            f"model {model!r} is not served at {self.endpoint} ({has}; a request for it gave "
            f"HTTP {answer.status}: {answer.message})",
            fix=fix,
        )

    def _answer(self, response: httpx.Response) -> _Answer:
        raw = self._scrub(response.text)
        try:
            data = json.loads(raw) if raw.strip() else None
        except ValueError:
            data = None
        text = " ".join(raw.split())[:SNIPPET]
        return _Answer(
            response.status_code,
            data,
            text,
            parse_retry_after(response.headers.get("retry-after")),
        )

    def _scrub(self, text: str) -> str:
        if self._key:
            text = text.replace(self._key, REDACTED)
        return redact_text(text)


def _causes(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in out and len(out) < 10:
        out.append(seen)
        seen = seen.__cause__ or seen.__context__
    return out


def _is_completion(data: Any, *, text: bool = False) -> bool:
    try:
        choice = data["choices"][0]
        if text:
            return isinstance(choice, dict) and isinstance(choice.get("text"), str)
        return isinstance(choice, dict) and isinstance(choice.get("message"), dict)
    except (TypeError, KeyError, IndexError):
        return False


def _names_the_model(answer: _Answer, model: str) -> bool:
    message = answer.message.lower()
    return model.lower() in message or (
        "model" in message
        and any(w in message for w in ("not found", "does not exist", "unknown", "no such"))
    )
