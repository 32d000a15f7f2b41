"""A deterministic fake OpenAI-compatible chat server, with optional fault injection.

For tests and benchmarks (loopback only, stdlib only): the answer is a function of the prompt,
so a run against it is reproducible. Faults, drawn per request from a seeded generator:
429 with Retry-After, 500, 503, a hang past the client's timeout, a connection reset, a
truncated body, a non-JSON body, and a response with no choices.

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
    reject_if: Callable[[Sequence[Mapping[str, Any]]], bool] | None = None  # -> 400
    lifetime_s: float = 600.0  # stops by itself after this long
    port: int = 0
    # what it saw
    counts: Counter[str] = field(default_factory=Counter)
    authorization: set[str] = field(default_factory=set)

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
        if method == "GET" and path.endswith("/stats"):
            await self._send(writer, 200, dict(self.counts))
            return True
        if method == "GET" and path.endswith("/models"):
            self.counts["models"] += 1
            await self._send(writer, 200, {"object": "list", "data": [{"id": "fake"}]})
            return True
        if method != "POST" or not path.endswith("/chat/completions"):
            await self._send(writer, 404, {"error": {"message": f"no route {path}"}})
            return True
        self.counts["chat"] += 1
        return await self._chat(json.loads(body), self.counts["chat"], writer)

    async def _chat(
        self, request: Mapping[str, Any], seen: int, writer: asyncio.StreamWriter
    ) -> bool:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        messages = request.get("messages") or []
        if self.fail_all is not None:
            self.counts[f"fault:{self.fail_all}"] += 1
            await self._send(writer, self.fail_all, {"error": {"message": "always failing"}})
            return True
        if self.reject_if is not None and self.reject_if(messages):
            self.counts["rejected"] += 1
            await self._send(writer, 400, {"error": {"message": "prompt rejected by policy"}})
            return True
        fault = None
        if seen <= self.fault_first:
            fault = self.faults[(seen - 1) % len(self.faults)]
        elif self.fault_rate and self._rng.random() < self.fault_rate:
            fault = self._rng.choice(list(self.faults))
        if fault is not None:
            self.counts[f"fault:{fault}"] += 1
            return await self._fault(fault, writer)
        text = fake_answer(messages)
        self.counts["answered"] += 1
        prompt_chars = sum(len(str(m.get("content", ""))) for m in messages)
        await self._send(
            writer,
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": request.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_chars // 4 + 1,
                    "completion_tokens": len(text) // 4,
                    "total_tokens": prompt_chars // 4 + 1 + len(text) // 4,
                },
            },
        )
        return True

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
