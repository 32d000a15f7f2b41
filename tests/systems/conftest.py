"""Fixtures for the model-server systems: fake servers (stopped in finalizers) and helpers."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

from benchreg import RunOptions, RunResult, load_task, run_task
from benchreg.core import registry
from benchreg.core.system import SystemContext, SystemReport
from benchreg.core.task import Task
from benchreg.core.types import Message, Prediction, Request, Sample
from benchreg.systems.fake_server import FakeChatServer

if any(importlib.util.find_spec(m) is None for m in ("httpx", "aiohttp")):  # `models` extra
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("httpx or aiohttp is missing; CI must install the `models` extra")
    collect_ignore_glob = ["test_openai*.py", "test_llama*.py"]

# Fast retries so that fault tests take seconds, not minutes.
FAST = {
    "timeout_s": 0.5,
    "max_retries": 8,
    "backoff": {"initial_s": 0.01, "max_s": 0.05, "multiplier": 2},
}


def chat_cfg(base_url: str, **extra: Any) -> dict[str, Any]:
    return {"name": "openai", "base_url": base_url, "model": "fake", **FAST, **extra}


def run(
    task: str | Task,
    system_cfg: dict[str, Any],
    *,
    view: str | None = None,
    limit: int | None = None,
    cache: str = "off",
    cache_dir: Path | None = None,
    batch_size: int = 64,
) -> RunResult:
    return run_task(
        load_task(task) if isinstance(task, str) else task,
        view=view,
        system_cfg=system_cfg,
        roots={},
        options=RunOptions(
            limit=limit,
            n_boot=0,
            cache=cache,
            cache_dir=str(cache_dir) if cache_dir else None,
            progress=False,
            batch_size=batch_size,
        ),
    )


@pytest.fixture
def fake_server() -> Iterator[Callable[..., FakeChatServer]]:
    """``fake_server(**options)`` starts a FakeChatServer; all are stopped after the test."""
    started: list[FakeChatServer] = []

    def start(**options: Any) -> FakeChatServer:
        options.setdefault("lifetime_s", 120.0)
        options.setdefault("hang_s", 1.0)
        server = FakeChatServer(**options)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()


def skip_or_fail(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason}; CI must install it")
    pytest.skip(reason)


def requests_for(n: int, prefix: str = "q") -> list[Request]:
    return [
        Request(Sample(f"{prefix}{i}", {}, 0), (Message("user", f"{prefix} question {i}"),))
        for i in range(n)
    ]


def build_system(system_cfg: dict[str, Any], **options: Any) -> Any:
    """The system ``system_cfg`` names, built as the core builds it (cache off by default)."""
    ctx = SystemContext(
        load_task("molp2s/gap"), None, Path("."), [], options={"cache": "off", **options}
    )
    return registry.systems.get(system_cfg["name"])(system_cfg, ctx)


def preflight(system_cfg: dict[str, Any], **options: Any) -> dict[str, Any] | None:
    """Build the system and run its endpoint check; what the check found (for the report)."""
    system = build_system(system_cfg, **options)

    async def go() -> dict[str, Any] | None:
        try:
            await system.preflight()
            return system.preflight_info
        finally:
            await system.aclose()

    return asyncio.run(go())


def predict_direct(
    system_cfg: dict[str, Any],
    requests: list[Request],
    *,
    on_answer: Callable[[Prediction], None] | None = None,
    **options: Any,
) -> tuple[list[Prediction], SystemReport]:
    """Ask a system for ``requests`` as the core asks a model server (all in one call, answers
    handed to ``on_answer`` as they arrive); return predictions + report."""
    system = build_system(system_cfg, **options)
    system.on_answer = on_answer

    async def go() -> tuple[list[Prediction], SystemReport]:
        try:
            return await system.predict(requests), system.report()
        finally:
            await system.aclose()

    return asyncio.run(go())


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A loopback server that accepts connections and never answers (a hung server); its base
    URL. Stopped (and every connection closed) after the test, and by itself after 60 s."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        deadline = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


def closed_port_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    """The messages of the warnings logged while the test runs."""
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
    yield lines
    logger.remove(sink)
