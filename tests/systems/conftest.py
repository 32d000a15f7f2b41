"""Fixtures for the model-server systems: fake servers (stopped in finalizers) and helpers."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchreg import RunOptions, RunResult, load_task, run_task
from benchreg.core import registry
from benchreg.core.system import SystemContext, SystemReport
from benchreg.core.types import Message, Prediction, Request, Sample
from benchreg.systems.fake_server import FakeChatServer

if importlib.util.find_spec("httpx") is None:  # the `models` extra
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("httpx is missing; CI must install the `models` extra")
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
    task: str,
    system_cfg: dict[str, Any],
    *,
    view: str | None = None,
    limit: int | None = None,
    cache: str = "off",
    cache_dir: Path | None = None,
    batch_size: int = 64,
) -> RunResult:
    return run_task(
        load_task(task),
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


def predict_direct(
    system_cfg: dict[str, Any],
    requests: list[Request],
    *,
    batch_size: int = 64,
    **options: Any,
) -> tuple[list[Prediction], SystemReport]:
    """Ask a system for ``requests`` in batches, as the core does; return predictions + report."""
    spec = load_task("molp2s/gap")
    ctx = SystemContext(
        spec, None, Path("."), [], options={"cache": "off", "batch_size": batch_size, **options}
    )
    system = registry.systems.get(system_cfg["name"])(system_cfg, ctx)

    async def go() -> tuple[list[Prediction], SystemReport]:
        out: list[Prediction] = []
        try:
            for start in range(0, len(requests), batch_size):
                out += await system.predict(requests[start : start + batch_size])
            return out, system.report()
        finally:
            await system.aclose()

    return asyncio.run(go())
