"""Every repeat has its seed: repeat r sends `model.seed + r` (base 0 when unset), for
`model=openai` and `model=llama_cpp` alike, so a sampled run can be asked again; the cache key is
the request, so repeat 0 of a repeated run is the plain run's entry."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from benchreg import RunOptions, RunResult, load_task
from benchreg.core.run import evaluate
from benchreg.systems.chat_config import DEFAULT_SEED, ChatConfig, LlamaConfig
from benchreg.systems.llama_cpp import LlamaCppSystem
from benchreg.systems.openai import ChatSystem
from tests.systems.conftest import chat_cfg


def _run(cfg: dict[str, Any], tmp_path: Path, **options: Any) -> RunResult:
    opts = RunOptions(n_boot=0, progress=False, cache="read_write", cache_dir=str(tmp_path))
    return evaluate(
        load_task("molp2s/gap"),
        view=None,
        system_cfg=cfg,
        roots={},
        options=replace(opts, **options),
    ).result


def _seeds(server: Any) -> list[Any]:
    return sorted({b.get("seed") for b in server.bodies if "messages" in b}, key=str)


def test_repeat_r_sends_the_base_seed_plus_r(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    cfg = chat_cfg(server.base_url, temperature=0.7, seed=10, preflight=False)
    result = _run(cfg, tmp_path, repeats=3, limit=4)
    assert _seeds(server) == [10, 11, 12]
    assert server.chat_requests == 3 * 4
    assert all(p.metadata["seed"] == 10 for p in result.predictions)  # repeat 0: the base
    assert result.system_report.stats["generation"]["values"]["seed"] == 10


def test_a_plain_run_and_a_repeated_one_share_repeat_0(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    cfg = chat_cfg(server.base_url, temperature=0.8, preflight=False)
    plain = _run(cfg, tmp_path, limit=5)
    assert server.chat_requests == 5 and _seeds(server) == [0]
    repeated = _run(cfg, tmp_path, limit=5, repeats=3)
    assert server.chat_requests == 5 + 2 * 5  # repeat 0 came from the plain run's entries
    assert [p.raw_text for p in repeated.predictions] == [p.raw_text for p in plain.predictions]
    assert all(p.metadata["cached"] for p in repeated.predictions)
    # the key is the request: seed base 1, repeat 0 is the request repeat 1 above sent
    _run({**cfg, "seed": 1}, tmp_path, limit=5)
    assert server.chat_requests == 15


def test_the_seed_rule_is_the_same_for_llama_cpp() -> None:
    for cls in (ChatConfig, LlamaConfig):
        config = cls(model="m")
        assert config.generation()["seed"] == DEFAULT_SEED == 0
        assert [config.seed_of(r) for r in range(3)] == [0, 1, 2]
        seeded = cls(model="m", seed=7)
        assert [seeded.seed_of(r) for r in range(3)] == [7, 8, 9]
    assert ChatConfig(model="m", extra_body={"seed": 5}).seed_of(1) == 6  # extra_body wins
    # model=llama_cpp builds its requests with the same code (it overrides no request builder)
    assert LlamaCppSystem._ask_of is ChatSystem._ask_of
    assert LlamaCppSystem._prediction is ChatSystem._prediction
