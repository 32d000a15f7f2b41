"""A deterministic fake OpenAI-compatible chat server, with optional fault injection.

For tests and benchmarks (loopback only, stdlib only): the answer is a function of the prompt,
so a run against it is reproducible. Faults, drawn per request from a seeded generator:
429 with Retry-After, 500, 503, a hang past the client's timeout, a connection reset, a
truncated body, a non-JSON body, and a response with no choices. Misconfigurations, for the
endpoint check: a key it requires (401/403 otherwise), the models it lists (or no listing), a
model name it refuses, a body that is not JSON on every route; and a server that echoes the key.

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
import threading
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
    lifetime_s: float = 600.0  # stops by itself after this long
    port: int = 0
    # what it saw
    counts: Counter[str] = field(default_factory=Counter)
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
        if not path.startswith("/v1/"):  # the API lives under /v1 only
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
        if method == "GET" and path.endswith("/models"):
            self.counts["models"] += 1
            if self.models_status is not None:
                message = {"error": {"message": "models listing unavailable"}}
                await self._send(writer, self.models_status, message)
            elif self.models is None:
                await self._send(writer, 404, {"error": {"message": f"no route {path}"}})
            else:
                data = [{"id": m, "object": "model"} for m in self.models]
                await self._send(writer, 200, {"object": "list", "data": data})
            return True
        if method == "POST" and path.endswith("/v1/completions") and self.completions:
            self.counts["completion"] += 1
            request = json.loads(body)
            self.bodies.append(request)
            await self._completion(request, writer)
            return True
        if method != "POST" or not path.endswith("/chat/completions"):
            await self._send(writer, 404, {"error": {"message": f"no route {path}"}})
            return True
        self.counts["chat"] += 1
        request = json.loads(body)
        self.bodies.append(request)
        if self.strict_models and request.get("model") not in (self.models or ()):
            self.counts["unknown_model"] += 1
            message = f"The model `{request.get('model')}` does not exist."
            await self._send(writer, 404, {"error": {"message": message}})
            return True
        return await self._chat(request, self.counts["chat"], writer, auth)

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
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
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
        await self._send(
            writer,
            200,
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
            "usage": dict(usage),
        }
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
            top = fake_next_tokens(prompt)
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


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-s", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--lifetime-s", type=float, default=600.0)
    args = parser.parse_args(argv)
    server = FakeChatServer(
        latency_s=args.latency_s,
        fault_rate=args.fault_rate,
        lifetime_s=args.lifetime_s,
        port=args.port,
    )
    asyncio.run(server.serve(on_ready=lambda port: print(f"PORT {port}", flush=True)))


if __name__ == "__main__":
    main()
