"""core.run: the one orchestrator, with and without a run folder (claim, write, reuse, refuse,
resume), the frozen-view guard and the library face (run_task / arun_task)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.journal import JOURNAL_FILE
from benchreg.core.options import RunOptions
from benchreg.core.outputs import PROVENANCE_FILE, SAMPLES_FILE
from benchreg.core.run import (
    Evaluation,
    RunOutput,
    aevaluate,
    arun_task,
    evaluate,
    run_task,
)
from benchreg.core.runfolder import METRICS_FILE, RUN_FILE
from benchreg.core.system import BaseSystem, SystemContext, SystemContractError
from benchreg.core.task import Task, load_task
from benchreg.core.types import Prediction, Request

FAST = RunOptions(progress=False, n_boot=20)
SYSTEM_NAME = "test_run_oracle"


@dataclass
class Script:
    """What the oracle system does and what happened to it (shared by every instance)."""

    fail_at_batch: int | None = None  # raise while answering this batch (0-based)
    wrong_count: bool = False  # break the contract: one prediction short
    built: int = 0
    asked: list[str] = field(default_factory=list)  # sample ids, in the order asked
    batches: int = 0
    closed: int = 0


class Oracle(BaseSystem):
    """Answers every sample with its gold answer (accuracy 1), as the script says."""

    name = "oracle"

    def __init__(self, script: Script) -> None:
        self.script = script

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        script = self.script
        batch = script.batches
        script.batches += 1
        if script.fail_at_batch == batch:
            raise RuntimeError("the server went away")
        script.asked += [r.sample.id for r in requests]
        answers = [Prediction(r.sample.id, answer=r.sample.gold) for r in requests]
        return answers[:-1] if script.wrong_count else answers

    async def aclose(self) -> None:
        self.script.closed += 1


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Iterator[Script]:
    """The oracle system registered (for this test only) as `test_run_oracle`."""
    registry.load_components()
    state = Script()

    def factory(cfg: Mapping[str, Any], ctx: SystemContext) -> Oracle:
        state.built += 1
        return Oracle(state)

    monkeypatch.setitem(registry.systems._items, SYSTEM_NAME, factory)
    yield state


@pytest.fixture(scope="module")
def gap() -> Task:
    return load_task("molp2s/gap")


@pytest.fixture(scope="module")
def pdf() -> Task:
    return load_task("retrieval/pdf")


def run_into(
    task: Task,
    folder: Path,
    *,
    reuse: bool = False,
    options: RunOptions = FAST,
    config: Mapping[str, Any] | None = None,
) -> Evaluation:
    return evaluate(
        task,
        view=None,
        system_cfg={"name": SYSTEM_NAME},
        roots={},
        options=options,
        output=RunOutput(folder, config or {"model": {"name": SYSTEM_NAME}}, reuse),
    )


# --- a run folder -------------------------------------------------------------------------------


def test_evaluate_writes_the_run_folder(gap: Task, script: Script, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    evaluation = run_into(gap, folder, config={"model": {"name": SYSTEM_NAME, "api_key": "k"}})
    assert not evaluation.reused and evaluation.folder == folder
    result = evaluation.result
    assert result is not None
    n = len(result.samples)
    assert script.asked == [s.id for s in result.samples] and script.closed == 1
    assert result.metrics["accuracy"].value == 1.0
    assert result.statuses == {"ok": n, "missing": 0, "invalid": 0, "out_of_range": 0, "error": 0}

    record = json.loads((folder / METRICS_FILE).read_text("utf-8"))
    assert record == json.loads(json.dumps(evaluation.record))
    assert (record["task"], record["view"], record["model"]) == ("molp2s/gap", "correct", "oracle")
    assert record["metrics"]["accuracy"]["value"] == 1.0 and record["n"] == n
    rows = [json.loads(x) for x in (folder / SAMPLES_FILE).read_text("utf-8").splitlines()]
    assert len(rows) == n and all(r["score"] == 1.0 for r in rows)
    provenance = json.loads((folder / PROVENANCE_FILE).read_text("utf-8"))
    assert provenance["task"] == "molp2s/gap"
    assert provenance["config"]["model"]["api_key"] != "k"
    run = json.loads((folder / RUN_FILE).read_text("utf-8"))
    assert (run["task"], run["view"], run["model"], run["attempt"]) == (
        "molp2s/gap",
        "correct",
        SYSTEM_NAME,
        1,
    )
    assert len((folder / JOURNAL_FILE).read_text("utf-8").splitlines()) == n


def test_a_finished_run_is_reused_without_asking_again(
    gap: Task, script: Script, tmp_path: Path
) -> None:
    folder = tmp_path / "run"
    first = run_into(gap, folder)
    before = (folder / METRICS_FILE).read_bytes()
    asked = list(script.asked)
    again = run_into(gap, folder, reuse=True)
    assert again.reused is True and again.result is None
    assert again.folder == folder
    assert again.record == json.loads(json.dumps(first.record))
    assert script.asked == asked  # nothing asked the second time
    assert script.closed == 2  # but the system built for it was closed
    assert (folder / METRICS_FILE).read_bytes() == before


def test_a_finished_run_is_refused_without_reuse(gap: Task, script: Script, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    run_into(gap, folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    asked = len(script.asked)
    with pytest.raises(BenchregError, match="already holds a finished run") as info:
        run_into(gap, folder)
    assert info.value.where == str(folder)
    assert "run.overwrite=true" in str(info.value.fix)
    assert len(script.asked) == asked
    assert script.closed == 2
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before


def test_overwrite_runs_again(gap: Task, script: Script, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    run_into(gap, folder)
    n = len(script.asked)
    again = run_into(gap, folder, options=RunOptions(progress=False, n_boot=20, overwrite=True))
    assert again.result is not None and not again.reused
    assert len(script.asked) == 2 * n


def test_another_run_in_the_folder_is_refused(gap: Task, script: Script, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    run_into(gap, folder)
    other = RunOptions(progress=False, n_boot=20, seed=1)  # changes the fingerprint
    with pytest.raises(BenchregError, match="already holds a finished run of molp2s/gap"):
        run_into(gap, folder, reuse=True, options=other)


def test_a_failed_run_resumes_from_its_journal(gap: Task, script: Script, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    options = RunOptions(progress=False, n_boot=20, batch_size=5)
    script.fail_at_batch = 1
    with pytest.raises(RuntimeError, match="went away"):
        run_into(gap, folder, options=options)
    assert script.closed == 1  # closed on failure too
    assert not (folder / METRICS_FILE).exists()
    first_batch = list(script.asked)
    assert len(first_batch) == 5

    script.fail_at_batch = None
    evaluation = run_into(gap, folder, options=options)
    result = evaluation.result
    assert result is not None and not evaluation.reused
    ids = [s.id for s in result.samples]
    assert script.asked[5:] == ids[5:]  # only what the journal did not hold
    assert result.metrics["accuracy"].value == 1.0
    assert json.loads((folder / RUN_FILE).read_text("utf-8"))["attempt"] == 2


def test_a_system_that_breaks_the_contract_stops_the_run(
    gap: Task, script: Script, tmp_path: Path
) -> None:
    script.wrong_count = True
    with pytest.raises(SystemContractError, match="returned"):
        run_into(gap, tmp_path / "run")
    assert script.closed == 1
    assert not (tmp_path / "run" / METRICS_FILE).exists()


# --- the frozen-view guard ----------------------------------------------------------------------


def test_a_frozen_view_is_refused_before_the_system_is_built(
    pdf: Task, script: Script, tmp_path: Path
) -> None:
    with pytest.raises(BenchregError, match="'test' view of retrieval/pdf is frozen"):
        evaluate(
            pdf,
            view="test",
            system_cfg={"name": SYSTEM_NAME},
            roots={},
            options=FAST,
            output=RunOutput(tmp_path / "run"),
        )
    assert script.built == 0
    assert not (tmp_path / "run").exists()
    with pytest.raises(BenchregError, match="frozen"):
        run_task(pdf, view="test", options=FAST)


def test_a_final_run_may_read_a_frozen_view(pdf: Task) -> None:
    final = RunOptions(progress=False, n_boot=20, final=True)
    result = run_task(pdf, view="test", options=final)
    assert result.view == "test"
    assert result.samples and sum(result.statuses.values()) == len(result.samples)
    dev = run_task(pdf, view="dev", options=FAST)
    assert {s.id for s in dev.samples}.isdisjoint({s.id for s in result.samples})


# --- the library face ---------------------------------------------------------------------------


def test_run_task_defaults_to_the_baseline_and_the_default_view(gap: Task) -> None:
    result = run_task(gap, options=FAST)
    assert result.view == "correct"
    assert result.system_name == "baseline:molp2s_rdkit"
    assert result.task is gap and result.spec is gap.spec
    assert result.primary == "accuracy"
    assert result.counts["tasks"] == len(result.samples)
    assert result.counts["hits"] == round(result.metrics["accuracy"].value * len(result.samples))
    assert set(result.seconds) == {"load", "predict", "predict_cpu", "score"}


def test_evaluate_without_a_folder_returns_the_result_only(gap: Task, script: Script) -> None:
    evaluation = evaluate(
        gap, view="shuffled", system_cfg={"name": SYSTEM_NAME}, roots={}, options=FAST
    )
    assert evaluation.result is not None and evaluation.result.view == "shuffled"
    assert (evaluation.record, evaluation.folder, evaluation.reused) == (None, None, False)


def test_limit_label_and_batch_size(gap: Task, script: Script) -> None:
    options = RunOptions(progress=False, n_boot=20, limit=5, batch_size=2)
    result = run_task(gap, system_cfg={"name": SYSTEM_NAME, "label": "gold"}, options=options)
    assert len(result.samples) == 5 and script.batches == 3
    assert result.system_name == "gold" and result.system_identity == "oracle"


def test_bad_model_params_are_refused(pdf: Task) -> None:
    with pytest.raises(BenchregError, match="baseline 'bm25': unknown param 'kk'"):
        run_task(pdf, system_cfg={"name": "baseline", "params": {"kk": 2}}, options=FAST)
    tuned = run_task(pdf, system_cfg={"name": "baseline", "params": {"k": 1}}, options=FAST)
    assert tuned.system_identity == 'baseline:bm25:{"k": 1}'
    # at most one result per query with k=1 (the default k returns more than that)
    assert tuned.counts["results"] <= len(tuned.samples)
    assert run_task(pdf, options=FAST).counts["results"] > len(tuned.samples)


def test_arun_task_awaits_in_a_running_loop(gap: Task) -> None:
    async def main() -> tuple[float, float]:
        awaited = await arun_task(gap, options=FAST)
        nested = run_task(gap, options=FAST)  # from inside the loop: a worker thread
        return awaited.metrics["accuracy"].value, nested.metrics["accuracy"].value

    awaited, nested = asyncio.run(main())
    assert awaited == nested == run_task(gap, options=FAST).metrics["accuracy"].value


def test_aevaluate_is_the_async_orchestrator(gap: Task, script: Script, tmp_path: Path) -> None:
    evaluation = asyncio.run(
        aevaluate(
            gap,
            view=None,
            system_cfg={"name": SYSTEM_NAME},
            roots={},
            options=FAST,
            output=RunOutput(tmp_path / "run"),
        )
    )
    assert evaluation.record is not None and evaluation.record["n"] == len(script.asked)
    assert (tmp_path / "run" / METRICS_FILE).is_file()


@pytest.mark.parametrize("model", ["baseline", "random"])
def test_an_offline_system_writes_no_journal_and_resumes_the_same(
    gap: Task, model: str, tmp_path: Path
) -> None:
    """Answers made from the inputs alone are not journaled (the inputs hold them); a run
    whose folder was claimed but not finished is resumed by making them again."""
    folder = tmp_path / "run"

    def once() -> Evaluation:
        return evaluate(
            gap,
            view=None,
            system_cfg={"name": model},
            roots={},
            options=FAST,
            output=RunOutput(folder, {"model": {"name": model}}),
        )

    first = once()
    assert first.record is not None and first.record["complete"]
    assert not (folder / JOURNAL_FILE).exists()
    rows = (folder / SAMPLES_FILE).read_bytes()
    (folder / METRICS_FILE).unlink()  # as if the run stopped before its end
    (folder / SAMPLES_FILE).unlink()
    second = once()
    assert second.result is not None and not second.reused
    assert second.record is not None
    assert second.record["metrics"] == first.record["metrics"]
    assert (folder / SAMPLES_FILE).read_bytes() == rows
    assert not (folder / JOURNAL_FILE).exists()


def test_a_predictions_run_writes_no_journal(tmp_path: Path) -> None:
    from benchreg.core.run import journaled
    from benchreg.core.system import Labelled, PredictionSetSystem
    from benchreg.core.types import PredictionSet

    system = PredictionSetSystem("my_reader_system", PredictionSet(by_id={}, files=[]))
    assert not journaled(system)  # however the reader system was registered
    assert not journaled(Labelled(system, "mine"))
    assert journaled(Oracle(Script()))


def test_answers_looked_up_by_id_equal_the_requests_path(
    gap: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A predictions system's answers, looked up without building a request each
    (``answers_for``), score and write what the requests path does (two samples missing)."""
    from benchreg.core import run as run_module
    from benchreg.core.system import PredictionSetSystem
    from benchreg.core.types import PredictionSet

    registry.load_components()
    looked_up: list[int] = []

    class Lookup(PredictionSetSystem):
        def answers_for(self, samples: Sequence[Any]) -> list[Prediction]:
            looked_up.append(len(samples))
            return super().answers_for(samples)

    def factory(cfg: Mapping[str, Any], ctx: SystemContext) -> PredictionSetSystem:
        answers = {s.id: Prediction(s.id, answer=k % 3) for k, s in enumerate(ctx.samples[2:])}
        return Lookup("lookup", PredictionSet(by_id=answers, files=[]))

    monkeypatch.setitem(registry.systems._items, "test_lookup", factory)

    def once(folder: Path) -> tuple[Any, bytes]:
        found = evaluate(
            gap,
            view=None,
            system_cfg={"name": "test_lookup"},
            roots={},
            options=FAST,
            output=RunOutput(folder, {"model": {"name": "test_lookup"}}),
        )
        assert found.record is not None
        return found.record["metrics"], (folder / SAMPLES_FILE).read_bytes()

    direct = once(tmp_path / "direct")
    assert looked_up and looked_up[0] > 2
    monkeypatch.setattr(run_module, "_answers_directly", lambda *args: False)
    assert once(tmp_path / "requests") == direct
    assert len(looked_up) == 2  # (predict looks them up too)
