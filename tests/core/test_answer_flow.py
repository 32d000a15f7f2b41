"""How the core hands requests to a system: a system that answers one by one gets every request
in one call, and each answer reaches the journal, the budget and the progress bar as it
arrives; any other system gets `run.batch_size` at a time."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from benchreg.core import registry
from benchreg.core.progress import Progress
from benchreg.core.run import RunOutput, _answer_sinks, evaluate
from benchreg.core.system import BaseSystem, Budget, SystemContext
from benchreg.core.task import load_task
from benchreg.core.types import Prediction, Request

SYSTEM_NAME = "test_one_by_one"


@dataclass
class Seen:
    calls: list[int] = field(default_factory=list)  # requests per predict() call
    fail_after: int | None = None  # raise once this many answers were handed on


class OneByOne(BaseSystem):
    """Answers each request with its gold, handing every answer on as it is made."""

    name = "one_by_one"
    answers_one_by_one = True

    def __init__(self, seen: Seen) -> None:
        self.seen = seen

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        self.seen.calls.append(len(requests))
        out = []
        for request in requests:
            if self.seen.fail_after is not None and len(out) == self.seen.fail_after:
                raise RuntimeError("the server went away")
            answer = Prediction(request.sample.id, answer=request.sample.gold)
            if self.on_answer is not None:
                self.on_answer(answer)
            out.append(answer)
        return out


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Iterator[Seen]:
    registry.load_components()
    state = Seen()

    def factory(cfg: Mapping[str, Any], ctx: SystemContext) -> OneByOne:
        return OneByOne(state)

    monkeypatch.setitem(registry.systems._items, SYSTEM_NAME, factory)
    yield state


def _run(folder: Path, **options: Any) -> Any:
    from benchreg import RunOptions

    return evaluate(
        load_task("molp2s/gap"),
        view=None,
        system_cfg={"name": SYSTEM_NAME},
        roots={},
        options=RunOptions(progress=False, n_boot=0, **options),
        output=RunOutput(folder),
    )


def test_every_request_in_one_call_whatever_the_batch_size(seen: Seen, tmp_path: Path) -> None:
    evaluation = _run(tmp_path / "run", batch_size=2)
    n = len(evaluation.result.samples)
    assert seen.calls == [n] and evaluation.result.metrics["accuracy"].value == 1.0
    assert len((tmp_path / "run" / "journal.jsonl").read_text().splitlines()) == n


def test_answers_handed_on_are_journaled_when_the_system_fails(seen: Seen, tmp_path: Path) -> None:
    seen.fail_after = 5
    with pytest.raises(RuntimeError, match="went away"):
        _run(tmp_path / "run")
    assert len((tmp_path / "run" / "journal.jsonl").read_text().splitlines()) == 5
    seen.fail_after = None
    evaluation = _run(tmp_path / "run")
    n = len(evaluation.result.samples)
    assert seen.calls[-1] == n - 5  # only the rest asked again


def test_each_answer_advances_the_progress_and_the_budget() -> None:
    system = OneByOne(Seen())
    progress = Progress("answering", 3, enabled=False)
    budget = Budget(max_tokens_total=100)
    _answer_sinks(system, None, budget, {}, progress)
    usage = {"usage": {"prompt_tokens": 2, "completion_tokens": 1}}
    answers = [Prediction(f"s{i}", answer=0, metadata=usage) for i in range(3)]
    for i, answer in enumerate(answers):
        assert progress.done == i
        system.on_answer(answer)
    assert progress.done == 3 and budget.tokens == 9 and system.budget is budget


def test_a_batch_system_advances_the_progress_per_batch_not_per_answer() -> None:
    class Batched(BaseSystem):
        name = "batched"

    system = Batched()
    progress = Progress("answering", 3, enabled=False)
    _answer_sinks(system, None, None, {}, progress)
    assert system.on_answer is None  # nothing to hand on: the batch's return is journaled
