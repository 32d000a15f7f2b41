"""The window, timeouts and streams against the REAL llama.cpp server (llama-cpp-python + the
packaged SmolLM2-135M-Instruct GGUF), which answers one request at a time: requests queued in it
past a short timeout are never sent twice, and its habit of cutting a streamed answer short when
another request waits is met by asking for whole answers. Skipped without llama-cpp-python; a
failure under CI."""

from __future__ import annotations

import pytest
from loguru import logger

from tests.systems.conftest import run
from tests.systems.test_llama_cpp import llama_server  # noqa: F401

pytestmark = pytest.mark.slow

GENERATION = {"temperature": 0.0, "max_tokens": 48, "seed": 0}
LIMIT = 6


def _cfg(base_url: str, **more: object) -> dict[str, object]:
    return {"name": "openai", "base_url": base_url, "model": "smollm2", **GENERATION, **more}


def test_requests_queued_past_the_timeout_are_not_sent_again(llama_server) -> None:  # noqa: F811
    # All 6 in flight, one answered at a time: the last waits five answers in the server's
    # queue, longer than the timeout, while the server answers the others. The timeout is twice
    # one answer's time, measured first (another view: no cache hit; the first answer warms the
    # server up), so that one answer alone stays within it on a slow or busy machine.
    one = _cfg(llama_server.base_url, concurrency=1, stream=False)
    alone = run("molp2s/gap", one, view="correct", limit=3)  # the first also warms the server
    timeout = max(2.5, 2.0 * max(p.latency_s for p in alone.predictions[1:]))
    cfg = _cfg(llama_server.base_url, concurrency=LIMIT, timeout_s=timeout, stream=False)
    result = run("molp2s/gap", cfg, view="counterfactual", limit=LIMIT)
    stats = result.system_report.stats
    assert result.statuses["error"] == 0
    assert stats["requests"] == LIMIT and stats["retries"] == 0
    assert stats["concurrency"]["cuts"] == 0
    waited = max(p.latency_s for p in result.predictions)
    assert waited > timeout, "no request waited past the timeout: the test proves nothing"


def test_a_server_that_cuts_streams_gets_whole_requests(llama_server) -> None:  # noqa: F811
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
    try:
        streamed = run("molp2s/gap", _cfg(llama_server.base_url, concurrency=3), limit=LIMIT)
    finally:
        logger.remove(sink)
    whole = run("molp2s/gap", _cfg(llama_server.base_url, concurrency=3, stream=False), limit=LIMIT)
    assert [p.raw_text for p in streamed.predictions] == [p.raw_text for p in whole.predictions]
    transport = streamed.system_report.stats["transport"]
    assert transport["stream"] is False  # asked for whole answers once it cut one
    assert all(p.metadata["usage"].get("prompt_tokens") for p in streamed.predictions)
    assert len([line for line in lines if "does not stream answers whole" in line]) == 1
