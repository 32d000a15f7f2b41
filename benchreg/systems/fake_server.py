"""A deterministic fake OpenAI-compatible chat server, with optional fault injection.

For tests and benchmarks (loopback only, stdlib only): the answer is a function of the prompt,
so a run against it is reproducible. Faults, drawn per request from a seeded generator:
429 with Retry-After, 500, 503, a hang past the client's timeout, a connection reset, a
truncated body, a non-JSON body, and a response with no choices. Misconfigurations, for the
endpoint check: a key it requires (401/403 otherwise), the models it lists (or no listing), a
model name it refuses, a body that is not JSON on every route; and a server that echoes the key.
Like a model server it streams an answer asked with ``stream: true`` (server-sent events, the
answer in two parts half its answer time apart, token usage when ``stream_options`` asks), and it
can take varied answer times (a few long ones), run one request at a time (counting each
generation, per prompt), or push back (429 or 503 past a number of requests in flight).

    with FakeChatServer(latency_s=0.05).running() as server:
        ... server.base_url ...            # http://127.0.0.1:<port>/v1

    python -m benchreg.systems.fake_server --latency-s 0.05   # prints "PORT <n>", serves until
                                                               # killed or --lifetime-s passes
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import random
import re
import threading
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

HOST = "127.0.0.1"
FAULTS = (
    "429",
    "500",
    "503",
    "hang",
    "reset",
    "truncated",
    "not_json",
    "no_choices",
)
MAX_BODY = 16 << 20
FAKE_WEIGHTS = "/models/fake"  # the `root` its /models entries give by default


def fake_answer(messages: Sequence[Mapping[str, Any]]) -> str:
    """The fake model: a JSON answer (a candidate / option index 0 or 1) derived from the prompt."""
    digest = hashlib.sha256(json.dumps(list(messages), sort_keys=True).encode()).hexdigest()
    index = int(digest[:8], 16) % 2
    return (
        f'Reasoning {digest[:12]}.\n{{"selected_candidate_index": {index}, "answer": {index}, '
        f'"selected_option_index": {index}}}'
    )


def schema_answer(schema: Mapping[str, Any], seed_text: str) -> Any:
    """A value that follows the (simple) JSON Schema ``schema``: the fake model's structured
    answer, picked deterministically from ``seed_text`` where the schema leaves a choice."""
    digest = int(hashlib.sha256(seed_text.encode()).hexdigest()[:8], 16)
    if "enum" in schema:
        options = list(schema["enum"])
        return options[digest % len(options)] if options else None
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: schema_answer(sub, seed_text + key) for key, sub in props.items()}
    if kind == "array":
        return []
    if kind == "integer":
        return digest % 2
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return bool(digest % 2)
    return "x"


def fake_next_tokens(prompt: str) -> dict[str, float]:
    """The fake model's next-token log-probabilities after ``prompt``: after a colon, a space
    (0.4) or a digit at once; after a space or a digit, digits and a closing brace. The digits'
    weights follow the prompt's hash, so every option has a probability."""
    digest = hashlib.sha256(prompt.encode()).digest()
    weights = {str(d): 1.0 + digest[d] for d in range(10)}
    if (special := _counting_or_new_reply(prompt, weights)) is not None:
        return special
    if prompt.endswith(":"):
        weights = {k: v / sum(weights.values()) * 0.6 for k, v in weights.items()}
        weights[" "] = 0.4
    elif prompt[-1:].isdigit():
        total = sum(weights.values())
        weights = {k: v / total * 0.3 for k, v in weights.items()}
        weights["}"] = 0.7
    else:
        total = sum(weights.values())
        weights = {k: v / total for k, v in weights.items()}
    return {k: math.log(v) for k, v in weights.items()}


NEW_REPLY = "<|im_start|>assistant\n"  # where the fake chat model starts a reply
_COUNT = re.compile(r"(\d+),( ?)\Z")


def _counting_or_new_reply(prompt: str, digits: dict[str, float]) -> dict[str, float] | None:
    """Two habits of a language model that the endpoint check's prefill probe reads: a count
    (``..., 24,`` -> a space, ``..., 24, `` -> ``25``'s first digit) goes on, and a new reply
    starts with words (``OK``, ``Sure``, ``{"``), digits getting 1% between them. None: neither."""
    count = _COUNT.search(prompt)
    if count is not None:
        following = str(int(count.group(1)) + 1)
        top = following[0] if count.group(2) else " "
        rest = {k: v for k, v in {" ": 0.01, "\n": 0.01, "1": 0.01}.items() if k != top}
        return {k: math.log(v) for k, v in {top: 0.97, **rest}.items()}
    if prompt.endswith(NEW_REPLY):
        total = sum(digits.values())
        weights = {"OK": 0.55, "Sure": 0.25, '{"': 0.19}
        weights.update({k: v / total * 0.01 for k, v in digits.items()})
        return {k: math.log(v) for k, v in weights.items()}
    return None


def chat_prompt(messages: Sequence[Mapping[str, Any]], prefill: str) -> str:
    """The fake chat model's prompt: ChatML turns, then the reply. A final assistant message is
    continued (``prefill="continue"``; ``"trim"``: without its trailing white space) or, as a
    server that ignores ``continue_final_message`` does, closed before a new reply."""
    turns = list(messages)
    reply = ""
    if prefill in ("continue", "trim") and turns and turns[-1].get("role") == "assistant":
        reply = str(turns.pop().get("content") or "")
        reply = reply.rstrip() if prefill == "trim" else reply
    text = "".join(f"<|im_start|>{m.get('role')}\n{m.get('content')}<|im_end|>\n" for m in turns)
    return text + NEW_REPLY + reply


@dataclass
class FakeChatServer:
    latency_s: float = 0.0
    fault_rate: float = 0.0
    faults: Sequence[str] = FAULTS
    seed: int = 0
    retry_after: str = "0"
    hang_s: float = 2.0
    fault_first: int = 0  # the first n chat requests fail with the faults in turn
    fail_all: int | None = None  # answer every chat request with this HTTP status
    fail_after: int | None = None  # chat requests after the first n: HTTP 503 (a dying server)
    reject_if: Callable[[Sequence[Mapping[str, Any]]], bool] | None = None  # -> 400
    models: Sequence[str] | None = ("fake",)  # what GET /models lists; None: no such route (404)
    models_status: int | None = None  # GET /models answers this status instead
    # what it says it serves, for the weights probe (benchreg.systems.served): more fields of
    # each /models entry (vLLM's `root`, llama-server's `meta`; by default a `root`, as vLLM
    # lists it; {}: a server that pins nothing) and JSON answers of GET routes at its root
    # (`/props`, `/info`, ...); both may be changed while it runs (a weights swap)
    model_fields: dict[str, Any] = field(default_factory=lambda: {"root": FAKE_WEIGHTS})
    routes: dict[str, Any] = field(default_factory=dict)
    strict_models: bool = False  # a chat request for a model not in `models` -> 404
    require_key: str | None = None  # a request without "Bearer <key>" -> auth_status
    auth_status: int = 401
    garbage: bool = False  # every route answers 200 with an HTML page
    echo_key: bool = False  # the answer repeats the Authorization header (a leaky server)
    finish_reason: str = "stop"
    # what it reports answering: `model` (None: the model asked for) and `system_fingerprint`
    served_model: str | None = None
    fingerprint: str | None = None
    reasoning: str | None = None  # sent as `reasoning_content` (and counted as reasoning tokens)
    # `response_format` forms it follows ("json_schema", "json_object"); a form not listed is
    # refused with HTTP 400, unless `ignore_format` (it then answers free text)
    formats: Sequence[str] = ("json_schema", "json_object")
    ignore_format: bool = False
    completions: bool = True  # POST /v1/completions exists
    logprobs: bool = True  # text completions carry `logprobs` when asked
    # chat completions with `logprobs: true` answer one token with the fake model's next-token
    # log-probabilities (`logprobs.content[0].top_logprobs`, :func:`chat_prompt` of the messages)
    chat_logprobs: bool = True
    # a final assistant message under `continue_final_message`: "continue" it (vLLM, SGLang),
    # "trim" its trailing white space first (a template that trims content), "ignore" the field
    # (a new reply: llama-cpp-python), or "refuse" it (HTTP 400, an API without the field)
    prefill: str = "continue"
    logprob_answers: list[dict[str, Any]] = field(default_factory=list)  # chat: what it sent
    # a broken server: every `bad_logprob_every`-th answer with log-probabilities (chat or text)
    # gives its likeliest alternative this log-probability (NaN and infinities are sent as the
    # literals Python's json writes: NaN, Infinity)
    bad_logprob: float | None = None
    bad_logprob_every: int = 1
    # alternatives left out of every answer with log-probabilities (an option's digit missing
    # from `top_logprobs`, as when top_logprobs is small)
    hide_tokens: Sequence[str] = ()
    # answer time latency_s + latency_spread_s * u**8, u in [0, 1) from the prompt and the seed:
    # most answers fast, a few long (as with reasoning models), the same for every client
    latency_spread_s: float = 0.0
    slow_if: Callable[[Sequence[Mapping[str, Any]]], bool] | None = None  # -> slow_s to answer
    slow_s: float = 1.0
    streams: bool = True  # answers `stream: true` with server-sent events (else one body)
    stream_usage: bool = True  # a stream carries usage when stream_options asks for it
    # the token usage it sends: "counted" (its own counts), "none" (no `usage` at all), or
    # "negative" (a broken server's negative counts)
    usage_mode: str = "counted"
    refuse_stream: bool = False  # `stream: true` -> HTTP 400 (an API without the field)
    # streams end after their first half with [DONE] (llama-cpp-python does so to a streamed
    # answer whenever another request waits)
    cut_streams: bool = False
    one_at_a_time: bool = False  # generates for one request at a time, the others wait
    busy_limit: int | None = None  # more chat requests in flight than this -> busy_status
    busy_status: int = 429
    keep_bodies: bool = True  # every request body in `bodies` (off for long benchmark runs)
    lifetime_s: float = 600.0  # stops by itself after this long
    port: int = 0
    # what it saw
    counts: Counter[str] = field(default_factory=Counter)
    generations: Counter[str] = field(default_factory=Counter)  # per prompt (one_at_a_time)
    in_flight: int = 0
    max_in_flight: int = 0
    authorization: set[str] = field(default_factory=set)
    bodies: list[dict[str, Any]] = field(default_factory=list)  # every chat/completion body

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    @property
    def chat_requests(self) -> int:
        return self.counts["chat"]

    # --- running -------------------------------------------------------------------------------

    async def serve(self, on_ready: Callable[[int], None] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._turn = asyncio.Lock()  # one_at_a_time
        server = await asyncio.start_server(self._handle, HOST, self.port, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        if on_ready:
            on_ready(self.port)
        self._ready.set()
        async with server:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.lifetime_s)
            server.close()

    def start(self) -> FakeChatServer:
        """Serve from a background thread until :meth:`stop` (or ``lifetime_s``)."""
        self._thread = threading.Thread(target=lambda: asyncio.run(self.serve()), daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake server did not start")
        return self

    @contextlib.contextmanager
    def running(self) -> Iterator[FakeChatServer]:
        """Serve from a background thread for the duration of the block."""
        self.start()
        try:
            yield self
        finally:
            self.stop()

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # loop already closed
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)

    # --- HTTP ----------------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:  # the server is stopping
            pass
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {
            k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:] if ln)
        }
        length = min(int(headers.get("content-length", "0")), MAX_BODY)
        body = await reader.readexactly(length) if length else b""
        if "authorization" in headers:
            self.authorization.add(headers["authorization"])
        auth = headers.get("authorization", "")
        if method == "GET" and path.endswith("/stats"):
            await self._send(writer, 200, dict(self.counts))
            return True
        served = method == "GET" and path in self.routes
        if not path.startswith("/v1/") and not served:  # the API lives under /v1 only
            await self._send(writer, 404, {"detail": "Not Found"})
            return True
        if self.garbage:
            self.counts["garbage"] += 1
            await self._raw(writer, 200, b"<html><body>It works!</body></html>", ctype="text/html")
            return True
        if self.require_key is not None and auth != f"Bearer {self.require_key}":
            self.counts["unauthorised"] += 1
            message = "Incorrect API key provided" if auth else "Missing bearer token"
            await self._send(writer, self.auth_status, {"error": {"message": message}})
            return True
        if served:  # behind the key, as llama-server's /props is
            self.counts[f"GET {path}"] += 1
            await self._send(writer, 200, self.routes[path])
            return True
        if method == "GET" and path.endswith("/models"):
            await self._models(path, writer)
            return True
        if method == "POST" and path.endswith("/v1/completions") and self.completions:
            self.counts["completion"] += 1
            request = json.loads(body)
            self._record(request)
            await self._completion(request, writer)
            return True
        if method != "POST" or not path.endswith("/chat/completions"):
            await self._send(writer, 404, {"error": {"message": f"no route {path}"}})
            return True
        self.counts["chat"] += 1
        request = json.loads(body)
        self._record(request)
        if self.strict_models and request.get("model") not in (self.models or ()):
            self.counts["unknown_model"] += 1
            message = f"The model `{request.get('model')}` does not exist."
            await self._send(writer, 404, {"error": {"message": message}})
            return True
        return await self._chat_turn(request, self.counts["chat"], writer, auth)

    async def _models(self, path: str, writer: asyncio.StreamWriter) -> None:
        self.counts["models"] += 1
        if self.models_status is not None:
            message = {"error": {"message": "models listing unavailable"}}
            await self._send(writer, self.models_status, message)
        elif self.models is None:
            await self._send(writer, 404, {"error": {"message": f"no route {path}"}})
        else:
            data = [{"id": m, "object": "model", **self.model_fields} for m in self.models]
            await self._send(writer, 200, {"object": "list", "data": data})

    async def _chat_turn(
        self, request: Mapping[str, Any], seen: int, writer: asyncio.StreamWriter, auth: str
    ) -> bool:
        """A chat request as a busy server takes it: pushed back past ``busy_limit`` requests
        in flight, refused when it wants a stream this server refuses, or generated (in turn,
        one at a time, when so configured)."""
        if self.busy_limit is not None and self.in_flight >= self.busy_limit:
            self.counts[f"busy:{self.busy_status}"] += 1
            extra = {"Retry-After": self.retry_after}
            await self._send(writer, self.busy_status, {"error": {"message": "busy"}}, extra)
            return True
        if self.refuse_stream and request.get("stream"):
            self.counts["stream_refused"] += 1
            message = "Unrecognized request argument supplied: stream"
            await self._send(writer, 400, {"error": {"message": message}})
            return True
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if not self.one_at_a_time:
                return await self._chat(request, seen, writer, auth)
            async with self._turn:
                self.generations[_prompt_of(request)] += 1
                return await self._chat(request, seen, writer, auth)
        finally:
            self.in_flight -= 1

    def _refusal(self, messages: list[Any], seen: int) -> tuple[int, str] | None:
        """The status and message of a request this server refuses as configured, else None."""
        if self.fail_all is not None:
            self.counts[f"fault:{self.fail_all}"] += 1
            return self.fail_all, "always failing"
        if self.fail_after is not None and seen > self.fail_after:
            self.counts["fault:gone"] += 1
            return 503, "server is going away"
        if self.reject_if is not None and self.reject_if(messages):
            self.counts["rejected"] += 1
            return 400, "prompt rejected by policy"
        return None

    def _formatted(self, request: Mapping[str, Any], text: str) -> str | None:
        """The answer in the requested response format (None: a format this server refuses)."""
        response_format = request.get("response_format")
        if not isinstance(response_format, dict) or response_format.get("type") == "text":
            return text
        form = response_format.get("type")
        if form not in self.formats and not self.ignore_format:
            self.counts["format_refused"] += 1
            return None
        if form in self.formats:
            schema = (response_format.get("json_schema") or {}).get("schema")
            schema = response_format.get("schema", schema)
            text = json.dumps(schema_answer(schema or {}, text), ensure_ascii=False)
        return text

    async def _chat(
        self, request: Mapping[str, Any], seen: int, writer: asyncio.StreamWriter, auth: str = ""
    ) -> bool:
        await self._think(request)
        messages = request.get("messages") or []
        refusal = self._refusal(messages, seen)
        if refusal is not None:
            await self._send(writer, refusal[0], {"error": {"message": refusal[1]}})
            return True
        fault = None
        if seen <= self.fault_first:
            fault = self.faults[(seen - 1) % len(self.faults)]
        elif self.fault_rate and self._rng.random() < self.fault_rate:
            fault = self._rng.choice(list(self.faults))
        if fault is not None:
            self.counts[f"fault:{fault}"] += 1
            return await self._fault(fault, writer)
        if request.get("logprobs"):  # option scoring over chat
            return await self._chat_tokens(request, writer)
        text = self._formatted(request, fake_answer(messages))
        if text is None:
            form = (request.get("response_format") or {}).get("type")
            message = f"response_format type {form!r} is not supported"
            await self._send(writer, 400, {"error": {"message": message}})
            return True
        if self.echo_key:
            text = f"You sent {auth!r}. {text}"
        self.counts["answered"] += 1
        prompt_chars = sum(len(str(m.get("content", ""))) for m in messages)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_chars // 4 + 1,
            "completion_tokens": len(text) // 4,
            "total_tokens": prompt_chars // 4 + 1 + len(text) // 4,
        }
        if self.reasoning is not None:
            message["reasoning_content"] = self.reasoning
            usage["completion_tokens_details"] = {"reasoning_tokens": len(self.reasoning) // 4}
        await self._answer(
            writer,
            request,
            self._envelope(
                request,
                "chat.completion",
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": self.finish_reason,
                },
                usage,
            ),
        )
        return True

    def _record(self, request: dict[str, Any]) -> None:
        if self.keep_bodies:
            self.bodies.append(request)

    def _answer_time(self, request: Mapping[str, Any]) -> float:
        if self.slow_if is not None and self.slow_if(request.get("messages") or []):
            return self.slow_s
        if not self.latency_spread_s:
            return self.latency_s
        seed = f"{self.seed}:{_prompt_of(request)}".encode()
        u = zlib.crc32(seed) / 2**32
        return self.latency_s + self.latency_spread_s * u**8

    def _streamed(self, request: Mapping[str, Any]) -> bool:
        return self.streams and request.get("stream") is True

    async def _think(self, request: Mapping[str, Any]) -> None:
        """The time before the answer (a streamed one: before its first half)."""
        delay = self._answer_time(request)
        if delay and self._streamed(request):
            delay /= 2
        if delay:
            await asyncio.sleep(delay)

    async def _answer(
        self, writer: asyncio.StreamWriter, request: Mapping[str, Any], envelope: dict[str, Any]
    ) -> None:
        """The answer in one body, or streamed: the first half of its text at once, the rest
        half the answer time later, then the finish reason, the usage and ``[DONE]``."""
        if not self._streamed(request):
            await self._send(writer, 200, envelope)
            return
        first, rest = _stream_events(envelope, self._usage_asked(request))
        if self.cut_streams:
            self.counts["stream_cut"] += 1
            rest = b"data: [DONE]\n\n"
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        writer.write(f"{head}Transfer-Encoding: chunked\r\n\r\n".encode() + _chunk(first))
        await writer.drain()
        delay = self._answer_time(request) / 2
        if delay:
            await asyncio.sleep(delay)
        writer.write(_chunk(rest) + b"0\r\n\r\n")
        await writer.drain()

    def _usage_asked(self, request: Mapping[str, Any]) -> bool:
        options = request.get("stream_options")
        wanted = isinstance(options, dict) and bool(options.get("include_usage"))
        return self.stream_usage and wanted

    async def _chat_tokens(self, request: Mapping[str, Any], writer: asyncio.StreamWriter) -> bool:
        """A chat completion of one token with its alternatives (``top_logprobs`` of them), the
        prompt being :func:`chat_prompt` (one character, one prompt token)."""
        if request.get("continue_final_message") and self.prefill == "refuse":
            message = "Unrecognized request argument supplied: continue_final_message"
            await self._send(writer, 400, {"error": {"message": message}})
            return True
        asked = bool(request.get("continue_final_message"))
        prompt = chat_prompt(request.get("messages") or [], self.prefill if asked else "ignore")
        top = self._listed(fake_next_tokens(prompt))
        shown = sorted(top.items(), key=lambda kv: -kv[1])[: int(request.get("top_logprobs") or 1)]
        self.logprob_answers.append({"messages": request.get("messages"), "top": dict(shown)})
        token, logprob = shown[0]
        alternatives = [{"token": t, "logprob": lp, "bytes": None} for t, lp in shown]
        logprobs = None
        if self.chat_logprobs:
            item = {"token": token, "logprob": logprob, "top_logprobs": alternatives}
            logprobs = {"content": [item]}
        self.counts["answered"] += 1
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": token},
            "logprobs": logprobs,
            "finish_reason": "length",
        }
        usage = {"prompt_tokens": len(prompt), "completion_tokens": 1}
        usage["total_tokens"] = len(prompt) + 1
        await self._send(writer, 200, self._envelope(request, "chat.completion", choice, usage))
        return True

    def _envelope(
        self,
        request: Mapping[str, Any],
        kind: str,
        choice: Mapping[str, Any],
        usage: Mapping[str, Any],
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": "cmpl-fake",
            "object": kind,
            "model": self.served_model or request.get("model", "fake"),
            "choices": [dict(choice)],
        }
        if self.usage_mode == "negative":
            out["usage"] = {"prompt_tokens": -7, "completion_tokens": -3, "total_tokens": -10}
        elif self.usage_mode != "none":
            out["usage"] = dict(usage)
        if self.fingerprint is not None:
            out["system_fingerprint"] = self.fingerprint
        return out

    async def _completion(self, request: Mapping[str, Any], writer: asyncio.StreamWriter) -> None:
        """A text completion: the fake answer of the prompt, and with ``logprobs`` the fake
        next-token distribution (:func:`fake_next_tokens`) of the prompt's end."""
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if self.fail_all is not None:
            self.counts[f"fault:{self.fail_all}"] += 1
            await self._send(writer, self.fail_all, {"error": {"message": "always failing"}})
            return
        prompt = str(request.get("prompt", ""))
        want = request.get("logprobs")
        logprobs = None
        if want and self.logprobs:
            top = self._listed(fake_next_tokens(prompt))
            shown = dict(sorted(top.items(), key=lambda kv: -kv[1])[: int(want)])
            first = next(iter(shown))
            logprobs = {
                "tokens": [first],
                "token_logprobs": [shown[first]],
                "text_offset": [len(prompt)],
                "top_logprobs": [shown],
            }
            text = first
        else:
            text = fake_answer([{"role": "user", "content": prompt}])
        self.counts["answered"] += 1
        usage = {
            "prompt_tokens": len(prompt) // 4 + 1,
            "completion_tokens": max(1, len(text) // 4),
            "total_tokens": len(prompt) // 4 + 1 + max(1, len(text) // 4),
        }
        choice = {"index": 0, "text": text, "logprobs": logprobs, "finish_reason": "length"}
        await self._send(writer, 200, self._envelope(request, "text_completion", choice, usage))

    def _listed(self, top: dict[str, float]) -> dict[str, float]:
        """The alternatives an answer lists: ``hide_tokens`` left out, and every
        ``bad_logprob_every``-th answer's likeliest one given ``bad_logprob``."""
        top = {t: lp for t, lp in top.items() if t not in self.hide_tokens}
        self.counts["logprob_answers"] += 1
        if (
            self.bad_logprob is not None
            and self.counts["logprob_answers"] % max(1, self.bad_logprob_every) == 0
        ):
            likeliest = max(top, key=top.__getitem__)
            self.counts["bad_logprobs"] += 1
            # first in the listing (NaN never sorts): the answer's own token
            top = {likeliest: self.bad_logprob, **{t: v for t, v in top.items() if t != likeliest}}
            return top
        return top

    async def _fault(self, fault: str, writer: asyncio.StreamWriter) -> bool:
        if fault == "429":
            extra = {"Retry-After": self.retry_after}
            await self._send(writer, 429, {"error": {"message": "slow down"}}, extra)
        elif fault in ("500", "503"):
            await self._send(writer, int(fault), {"error": {"message": "server trouble"}})
        elif fault == "hang":
            await asyncio.sleep(self.hang_s)
            return False
        elif fault == "reset":
            writer.transport.abort()
            return False
        elif fault == "truncated":
            payload = b'{"choices": [{"message": {"content": "cut'
            await self._raw(writer, 200, payload, length=len(payload) + 40)
            return False
        elif fault == "not_json":
            await self._raw(writer, 200, b"<html>502 Bad Gateway</html>", ctype="text/html")
        elif fault == "no_choices":
            await self._send(writer, 200, {"id": "x", "choices": []})
        return True

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: Any,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        await self._raw(writer, status, json.dumps(payload).encode(), headers=headers)

    @staticmethod
    async def _raw(
        writer: asyncio.StreamWriter,
        status: int,
        body: bytes,
        *,
        length: int | None = None,
        ctype: str = "application/json",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        head = [
            f"HTTP/1.1 {status} X",
            f"Content-Type: {ctype}",
            f"Content-Length: {len(body) if length is None else length}",
            *(f"{k}: {v}" for k, v in (headers or {}).items()),
        ]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await writer.drain()


def _prompt_of(request: Mapping[str, Any]) -> str:
    """What tells one request's prompt from another's: the last message, or the text prompt."""
    messages = request.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[-1], dict):
        return str(messages[-1].get("content"))
    return str(request.get("prompt", ""))


def _stream_events(envelope: Mapping[str, Any], usage: bool) -> tuple[bytes, bytes]:
    """A chat completion as two runs of server-sent events: the first half of its text, then
    the rest, the finish reason, the usage (when asked) and ``[DONE]``."""
    choice = envelope["choices"][0]
    message = choice["message"]
    text = str(message.get("content") or "")
    top = {k: v for k, v in envelope.items() if k not in ("choices", "usage", "object")}
    top["object"] = "chat.completion.chunk"

    def event(delta: Mapping[str, Any], finish: str | None = None) -> bytes:
        chunk = {**top, "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}]}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    opening = {"role": "assistant", "content": text[: len(text) // 2]}
    if message.get("reasoning_content"):
        opening["reasoning_content"] = message["reasoning_content"]
    rest = [event({"content": text[len(text) // 2 :]}), event({}, choice["finish_reason"])]
    if usage and "usage" in envelope:
        last = {**top, "choices": [], "usage": envelope["usage"]}
        rest.append(b"data: " + json.dumps(last).encode() + b"\n\n")
    return event(opening), b"".join(rest) + b"data: [DONE]\n\n"


def _chunk(data: bytes) -> bytes:
    """One piece of a chunked HTTP body."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-s", type=float, default=0.0)
    parser.add_argument("--latency-spread-s", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--lifetime-s", type=float, default=600.0)
    parser.add_argument("--one-at-a-time", action="store_true")
    parser.add_argument("--no-stream", action="store_true", help="answer stream: true in one body")
    args = parser.parse_args(argv)
    server = FakeChatServer(
        latency_s=args.latency_s,
        latency_spread_s=args.latency_spread_s,
        seed=args.seed,
        fault_rate=args.fault_rate,
        lifetime_s=args.lifetime_s,
        port=args.port,
        one_at_a_time=args.one_at_a_time,
        streams=not args.no_stream,
        keep_bodies=False,  # a benchmark's server: memory stays flat
    )
    asyncio.run(server.serve(on_ready=lambda port: print(f"PORT {port}", flush=True)))


if __name__ == "__main__":
    main()
