"""The system contract: one prediction per request in order, prompts on demand, aclose always."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from benchreg import load_task
from benchreg.core import registry
from benchreg.core.run import arun_task, run_task
from benchreg.core.system import BaseSystem, PredictionSetSystem, SystemContractError
from benchreg.core.types import Prediction, PredictionSet, Request, Status


class Recording(BaseSystem):
    """Answers each request with the gold index; can be told to break the contract."""

    def __init__(self, mode: str = "ok") -> None:
        self.name = f"recording-{mode}"
        self.mode = mode
        self.closed = 0
        self.seen_messages: list[tuple[Any, ...]] = []

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        self.seen_messages += [r.messages for r in requests]
        answers = [Prediction(r.sample.id, answer=r.sample.gold) for r in requests]
        if self.mode == "drop":
            return answers[:-1]
        if self.mode == "reorder":
            return answers[::-1]
        if self.mode == "raise":
            raise RuntimeError("server exploded")
        return answers

    async def aclose(self) -> None:
        self.closed += 1


SYSTEMS: dict[str, Recording] = {}


def _factory(cfg: Mapping[str, Any], ctx: Any) -> Recording:
    system = Recording(str(cfg.get("mode", "ok")))
    SYSTEMS[system.mode] = system
    return system


registry.systems.add("recording_for_tests", _factory)


def _run(mode: str, **options: Any) -> Any:
    return run_task(
        load_task("molp2s/gap"),
        view="correct",
        system_cfg={"name": "recording_for_tests", "mode": mode},
        roots={},
    )


def test_a_conforming_system_is_scored_and_closed_once() -> None:
    result = _run("ok")
    assert result.metrics["accuracy"].value == 1.0
    assert result.statuses["ok"] == len(result.samples)
    assert SYSTEMS["ok"].closed == 1
    assert all(m == () for m in SYSTEMS["ok"].seen_messages)  # no prompts rendered unasked


@pytest.mark.parametrize(
    ("mode", "message"), [("drop", "predictions for"), ("reorder", "answered")]
)
def test_contract_violations_stop_the_run_and_still_close(mode: str, message: str) -> None:
    with pytest.raises(SystemContractError, match=message):
        _run(mode)
    assert SYSTEMS[mode].closed == 1


def test_a_failing_system_is_closed() -> None:
    with pytest.raises(RuntimeError, match="server exploded"):
        _run("raise")
    assert SYSTEMS["raise"].closed == 1


def test_run_task_works_inside_a_running_event_loop() -> None:
    async def notebook_cell() -> Any:
        sync = _run("ok")
        direct = await arun_task(
            load_task("molp2s/gap"),
            view="correct",
            system_cfg={"name": "recording_for_tests", "mode": "ok"},
            roots={},
        )
        return sync, direct

    sync, direct = asyncio.run(notebook_cell())
    assert sync.metrics["accuracy"].value == direct.metrics["accuracy"].value == 1.0


def test_prediction_set_system_answers_missing_for_absent_ids() -> None:
    spec = load_task("molp2s/gap")
    found = Prediction("r1", answer=0)
    system = PredictionSetSystem("p", PredictionSet({"r1": found}, files=[], unknown_ids=["zz"]))
    from benchreg.core.types import Sample

    requests = [Request(Sample("r1", {}, 0)), Request(Sample("r2", {}, 0))]
    answers = asyncio.run(system.predict(requests))
    assert answers[0] is found
    assert answers[1].status is Status.MISSING and answers[1].sample_id == "r2"
    assert system.report().unknown_ids == ["zz"]
    assert spec.name == "molp2s/gap"


def test_a_label_renames_the_system_but_keeps_its_identity() -> None:
    spec = load_task("molp2s/gap")
    plain = run_task(spec, view="correct", system_cfg={"name": "random", "seed": 1}, roots={})
    labelled = run_task(
        spec, view="correct", system_cfg={"name": "random", "seed": 1, "label": "coin"}, roots={}
    )
    assert labelled.system_name == "coin" and plain.system_name == "random(seed=1)"
    assert labelled.system_identity == plain.system_identity == "random(seed=1)"


def test_same_named_prediction_files_have_different_identities(tmp_path) -> None:
    import json

    spec = load_task("molp2s/gap")
    ids = []
    for model, index in (("a", 0), ("b", 1)):
        folder = tmp_path / model
        folder.mkdir()
        path = folder / "results.jsonl"
        line = {"record_id": "mp2s-0001", "selected_candidate_index": index}
        path.write_text(json.dumps(line) + "\n")
        result = run_task(
            spec, view="correct", system_cfg={"name": "predictions", "path": str(path)}, roots={}
        )
        ids.append((result.system_name, result.system_identity))
    assert ids[0][0] == ids[1][0] == "predictions:results.jsonl"
    assert ids[0][1] != ids[1][1] and ids[0][1].startswith("predictions:sha256=")
