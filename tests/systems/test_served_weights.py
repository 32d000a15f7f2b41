"""The weights are part of the identity: before the first request model=openai asks the server
what it serves, and other weights behind the same URL and name are never answered from the
cache (local stand-in servers; the real llama.cpp server is in test_llama_cpp_weights.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

from benchreg.core.provenance import REDACTED
from benchreg.systems.served import Served, Unreachable, read_served, server_root
from tests.systems.conftest import chat_cfg, closed_port_url, run

KEY = "sk-weights-0123456789abcdef"
PINS_NOTHING = "says nothing that pins the weights"


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(str(m)), level="WARNING")
    yield lines
    logger.remove(sink)


def _run(cfg: dict[str, Any], cache_dir: Path, limit: int = 3) -> Any:
    return run("molp2s/gap", cfg, limit=limit, cache="read_write", cache_dir=cache_dir)


@pytest.mark.parametrize(
    ("fields", "routes", "swap"),
    [  # vLLM: /models `root`; llama-server: /props `model_path`; TGI: /info `model_sha`
        ({"root": "/ckpt/step-1000", "owned_by": "vllm"}, {}, ("root", "/ckpt/step-2000")),
        (
            {"owned_by": "llamacpp"},
            {"/props": {"model_path": "/m/a.gguf"}},
            ("/props", "/m/b.gguf"),
        ),
        ({}, {"/info": {"model_id": "org/m", "model_sha": "abc"}}, ("/info", "def")),
    ],
    ids=["vllm-root", "llama-server-props", "tgi-info"],
)
def test_a_weights_swap_behind_one_url_and_name_is_asked_again(
    fake_server, tmp_path: Path, fields: dict, routes: dict, swap: tuple[str, str], warnings
) -> None:
    server = fake_server(model_fields=dict(fields), routes={k: dict(v) for k, v in routes.items()})
    cfg = chat_cfg(server.base_url, label="mine")  # a label: model_id stays the system's own
    first = _run(cfg, tmp_path)
    assert server.chat_requests == 3
    where, value = swap
    if where == "root":
        server.model_fields["root"] = value
    elif where == "/props":
        server.routes["/props"]["model_path"] = value
    else:
        server.routes["/info"]["model_sha"] = value
    second = _run(cfg, tmp_path)
    assert server.chat_requests == 6  # the server asked again, every sample
    stats = second.system_report.stats
    assert stats["cache_hits"] == 0 and not any(p.metadata["cached"] for p in second.predictions)
    assert second.system_identity != first.system_identity  # model_id tells them apart
    assert value in str(stats["served"]["pin"]) and value in str(stats["identity"]["weights"])
    assert not any(PINS_NOTHING in line for line in warnings)
    third = _run(cfg, tmp_path)  # the same weights again: from the cache
    assert server.chat_requests == 6 and third.system_report.stats["cache_hits"] == 3
    assert third.system_identity == second.system_identity


def test_the_same_weights_are_answered_from_the_cache(fake_server, tmp_path: Path) -> None:
    server = fake_server(model_fields={"root": "/ckpt/a", "max_model_len": 4096})
    first = _run(chat_cfg(server.base_url), tmp_path)
    second = _run(chat_cfg(server.base_url), tmp_path)
    assert server.chat_requests == 3 and second.system_report.stats["cache_hits"] == 3
    served = second.system_report.stats["served"]
    assert served["pin"] == {"models.root": "/ckpt/a"}
    assert served["info"]["max_model_len"] == 4096  # recorded, not keyed
    assert served["asked"] == {"GET /models": 200}  # `root` said it: no more requests
    assert server.counts["models"] == 2  # one per run: the endpoint check's listing is read
    assert second.system_identity == first.system_identity


def test_a_server_that_pins_nothing_says_so_once(fake_server, tmp_path: Path, warnings) -> None:
    server = fake_server(model_fields={})  # lists "fake" under its own name, nothing else
    result = _run(chat_cfg(server.base_url), tmp_path)
    said = [line for line in warnings if PINS_NOTHING in line]
    assert len(said) == 1 and "model.revision=" in said[0]
    assert sum(PINS_NOTHING in note for note in result.system_report.notes) == 1
    served = result.system_report.stats["served"]
    assert served["pinned"] is False and served["pin"] == {}
    assert served["asked"] == {
        "GET /models": 200,
        "GET /props": 404,
        "GET /get_model_info": 404,
        "GET /info": 404,
        "GET /api/tags": 404,
    }
    assert "weights" not in result.system_report.stats["identity"]  # the key as before
    again = _run(chat_cfg(server.base_url), tmp_path)
    assert again.system_report.stats["cache_hits"] == 3


def test_a_revision_answers_for_a_server_that_pins_nothing(
    fake_server, tmp_path: Path, warnings
) -> None:
    server = fake_server(model_fields={})
    result = _run(chat_cfg(server.base_url, revision="step-1000"), tmp_path)
    assert not any(PINS_NOTHING in line for line in warnings)
    assert any("model.revision=step-1000 only" in n for n in result.system_report.notes)


def test_the_probe_sends_the_key_and_never_records_it(
    fake_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEIGHTS_KEY", KEY)
    props = {"model_path": "/m/a.gguf", "build_info": f"b1 (started with --api-key {KEY})"}
    server = fake_server(require_key=KEY, model_fields={}, routes={"/props": props})
    result = _run(chat_cfg(server.base_url, api_key_env="WEIGHTS_KEY"), tmp_path)
    assert server.counts["GET /props"] == 1 and server.counts["unauthorised"] == 0
    served = result.system_report.stats["served"]
    assert served["pin"] == {"props.model_path": "/m/a.gguf"}
    assert KEY not in str(served) and REDACTED in served["info"]["build_info"]


def test_model_preflight_false_still_asks_what_is_served(fake_server, tmp_path: Path) -> None:
    server = fake_server(model_fields={"root": "/ckpt/a"})
    cfg = chat_cfg(server.base_url, preflight=False)
    _run(cfg, tmp_path)
    server.model_fields["root"] = "/ckpt/b"
    second = _run(cfg, tmp_path)
    assert server.chat_requests == 6 and second.system_report.stats["cache_hits"] == 0


def test_a_replay_with_the_server_down_keys_by_the_weights_seen_last(
    fake_server, tmp_path: Path, warnings
) -> None:
    server = fake_server(model_fields={"root": "/ckpt/a"})
    first = _run(chat_cfg(server.base_url), tmp_path)
    server.stop()
    replay = _run(chat_cfg(server.base_url, preflight=False), tmp_path)  # nothing listens
    assert replay.system_report.stats["cache_hits"] == 3
    assert replay.system_identity == first.system_identity
    said = [line for line in warnings if "did not answer to say what it serves" in line]
    assert len(said) == 1 and "/ckpt/a" in said[0]
    down = _run(chat_cfg(closed_port_url(), preflight=False, max_retries=0), tmp_path, limit=1)
    assert down.system_report.stats["served"]["pinned"] is False  # nothing seen there, ever


# --- what each kind of server says (the shapes their projects document) ------------------------

VLLM = {"data": [{"id": "m", "owned_by": "vllm", "root": "/w/qwen", "max_model_len": 32768}]}
SGLANG = {"data": [{"id": "m", "owned_by": "sglang", "root": "/w/q", "max_model_len": 8192}]}
LLAMA_SERVER = {
    "data": [
        {"id": "m", "owned_by": "llamacpp", "meta": {"size": 98, "n_params": 135, "n_vocab": 9}}
    ]
}
LLAMA_CPP_PYTHON = {"data": [{"id": "/w/smol.gguf", "owned_by": "me", "permissions": []}]}
HOSTED = {"data": [{"id": "m", "owned_by": "openai"}, {"id": "n", "owned_by": "openai"}]}
CASES = {
    "vllm": (VLLM, {}, {"models.root": "/w/qwen"}, ["GET /models"]),
    "sglang": (
        SGLANG,
        {"/get_model_info": {"model_path": "/w/q", "weight_version": "7", "is_generation": True}},
        {"models.root": "/w/q", "model_info.model_path": "/w/q", "model_info.weight_version": "7"},
        ["GET /models", "GET /get_model_info"],
    ),
    "llama-server": (
        LLAMA_SERVER,
        {"/props": {"model_path": "/w/a.gguf", "default_generation_settings": {"n_ctx": 4096}}},
        {"models.meta.size": 98, "models.meta.n_params": 135, "props.model_path": "/w/a.gguf"},
        ["GET /models", "GET /props"],
    ),
    "llama-cpp-python": (
        LLAMA_CPP_PYTHON,
        {},
        {"models.id": "/w/smol.gguf"},
        ["GET /models", "GET /props", "GET /get_model_info", "GET /info", "GET /api/tags"],
    ),
    "tgi": (
        None,
        {"/info": {"model_id": "org/m", "model_sha": "c0ffee", "model_dtype": "torch.float16"}},
        {"info.model_id": "org/m", "info.model_sha": "c0ffee"},
        ["GET /models", "GET /props", "GET /get_model_info", "GET /info"],
    ),
    "ollama": (
        {"data": [{"id": "m:latest", "owned_by": "library"}]},
        {"/api/tags": {"models": [{"name": "m:latest", "digest": "sha256:ab", "size": 5}]}},
        {"tags.digest": "sha256:ab"},
        ["GET /models", "GET /props", "GET /get_model_info", "GET /info", "GET /api/tags"],
    ),
    "hosted": (HOSTED, {}, {}, ["GET /models", "GET /props"]),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_what_each_server_kind_pins(kind: str) -> None:
    listing, routes, pin, asked = CASES[kind]
    base = "http://h:1/v1"

    async def get(url: str) -> tuple[int, Any]:
        route = url.removeprefix("http://h:1").removeprefix(
            "/v1" if url.endswith("/models") else ""
        )
        data = listing if route == "/models" else routes.get(route)
        return (200, data) if data is not None else (404, None)

    served = asyncio.run(read_served(get, base, "m"))
    assert served.pin == pin
    assert list(served.asked)[: len(asked)] == asked
    if kind == "llama-cpp-python":
        assert served.info == {"owned_by": "me"}


def test_an_unreachable_server_stops_the_probe_at_once() -> None:
    calls: list[str] = []

    async def get(url: str) -> tuple[int, Any]:
        calls.append(url)
        raise Unreachable("no answer within 5s")

    served = asyncio.run(read_served(get, "http://h:1/v1", "m"))
    assert calls == ["http://h:1/v1/models"]
    assert served == Served(asked={"GET /models": "no answer within 5s"}, reachable=False)


@pytest.mark.parametrize(
    ("base", "root"),
    [
        ("http://h:8000/v1", "http://h:8000"),
        ("http://h:8000/v1/", "http://h:8000"),
        ("https://proxy/llm/v1", "https://proxy/llm"),
        ("https://api.example.com", "https://api.example.com"),
    ],
)
def test_the_servers_own_routes_live_at_its_root(base: str, root: str) -> None:
    assert server_root(base) == root
