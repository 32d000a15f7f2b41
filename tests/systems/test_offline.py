"""The built-in offline systems: predictions file, baseline, random; one clear error each."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg import load_task
from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.system import SystemContext


def _ctx(task: str = "molp2s/gap") -> SystemContext:
    spec = load_task(task)
    return SystemContext(spec, spec.default_view, Path("."), samples=[])


def test_predictions_needs_a_path_and_an_existing_file(tmp_path: Path) -> None:
    factory = registry.systems.get("predictions")
    with pytest.raises(BenchregError, match="model=predictions needs a file"):
        factory({"name": "predictions", "path": "???"}, _ctx())
    with pytest.raises(BenchregError, match="predictions file not found"):
        factory({"name": "predictions", "path": str(tmp_path / "none.jsonl")}, _ctx())


def test_unknown_baseline_param_names_the_accepted_ones() -> None:
    factory = registry.systems.get("baseline")
    with pytest.raises(BenchregError) as info:
        factory({"name": "baseline", "params": {"temperature": 1}}, _ctx("reaction_mc/all_varying"))
    assert "baseline 'reaction_mc_nearest_reference': unknown param 'temperature'" in (
        info.value.message
    )
    assert "it takes: no params" in info.value.message


def test_random_is_seeded() -> None:
    import asyncio

    from benchreg.core.types import Request

    spec = load_task("molp2s/gap")
    from benchreg.core.pipeline import data_root_for, load_dataset

    samples = load_dataset(spec, "correct", data_root_for(spec, {})).samples
    ctx = SystemContext(spec, "correct", Path("."), samples)
    factory = registry.systems.get("random")

    def answers(seed: int) -> list[int]:
        system = factory({"name": "random", "seed": seed}, ctx)
        return [p.answer for p in asyncio.run(system.predict([Request(s) for s in samples]))]

    assert answers(3) == answers(3)
    assert answers(3) != answers(4)
    assert all(
        0 <= a < len(s.input["candidate_completed_smiles"])
        for a, s in zip(answers(3), samples, strict=True)
    )
