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
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from benchreg.core.errors import BenchregError
from benchreg.core.provenance import REDACTED, redact_text
from benchreg.systems.chat_config import ChatConfig
from benchreg.systems.retry import parse_retry_after, retryable_status

CHECK_TIMEOUT_S = 10.0
ATTEMPTS = 3  # for 429/5xx, within the few seconds the check may take
MAX_WAIT_S = 2.0  # longest pause between attempts (a longer Retry-After is cut to this)
SNIPPET = 120
SHOWN_MODELS = 8
SKIP_HINT = "model.preflight=false skips this check"


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
        text = error.get("message", error) if isinstance(error, dict) else error
        if isinstance(text, str) and text:
            return text[:SNIPPET]
        return self.text or "(empty body)"


class EndpointCheck:
    """``await EndpointCheck(config, key).run()`` -> what was found (for the system report)."""

    def __init__(self, config: ChatConfig, api_key: str | None) -> None:
        self.config = config
        self.endpoint = config.endpoint
        self.timeout = min(config.timeout_s, CHECK_TIMEOUT_S)
        self._key = api_key
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def run(self) -> dict[str, Any]:
        tic = time.perf_counter()
        async with httpx.AsyncClient(
            base_url=self.endpoint, headers=self._headers, timeout=httpx.Timeout(self.timeout)
        ) as http:
            listed = await self._listed_models(http)
            how = "models listing"
            if listed is None or self.config.model not in listed:
                await self._probe(http, listed)
                how = "1-token chat request"
        return {
            "checked": how,
            "models_listed": None if listed is None else len(listed),
            "seconds": round(time.perf_counter() - tic, 3),
        }

    # --- the two requests ----------------------------------------------------------------------

    async def _listed_models(self, http: httpx.AsyncClient) -> list[str] | None:
        """The ids the server lists; None when it has no usable listing (the probe decides)."""
        answer = await self._request(http, "GET", "/models")
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
        body = {
            "model": self.config.model,
            "messages": [{"role": "user", "content": "Reply with OK."}],
            **self.config.generation(),
            "max_tokens": 1,
        }
        answer = await self._request(http, "POST", "/chat/completions", body)
        if answer.status == 200:
            if _is_completion(answer.data):
                return
            raise BenchregError(
                f"the server at {self.endpoint} does not answer like an OpenAI-compatible API: "
                f"POST /chat/completions gave {answer.text!r}",
                fix="model.base_url should be the API root, e.g. http://<host>:<port>/v1 "
                f"({SKIP_HINT})",
            )
        if answer.status in (401, 403):
            raise self._refused(answer, "POST /chat/completions")
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
            raise BenchregError(
                f"no chat-completions API at {self.endpoint}: POST /chat/completions gave "
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
            fix="start the server, or fix model.base_url (host, port, http/https)",
        )

    def _transport_reason(self, exc: httpx.TransportError) -> str:
        text = self._scrub(str(exc)) or type(exc).__name__
        lowered = text.lower()
        host = urlsplit(self.endpoint).hostname
        if "refused" in lowered:
            return "connection refused (nothing listens on that port)"
        if any(
            mark in lowered
            for mark in ("name or service not known", "nodename nor servname", "getaddrinfo",
                         "name resolution", "no address associated")
        ):
            return f"host {host!r} not found (DNS)"
        if isinstance(exc, httpx.RemoteProtocolError):
            return f"the server closed the connection without an HTTP answer ({text})"
        if "ssl" in lowered or "certificate" in lowered:
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


def _is_completion(data: Any) -> bool:
    try:
        choice = data["choices"][0]
        return isinstance(choice, dict) and isinstance(choice.get("message"), dict)
    except (TypeError, KeyError, IndexError):
        return False


def _names_the_model(answer: _Answer, model: str) -> bool:
    message = answer.message.lower()
    return model.lower() in message or (
        "model" in message
        and any(w in message for w in ("not found", "does not exist", "unknown", "no such"))
    )
