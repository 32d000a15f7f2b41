"""The journal: answers survive a crash; a torn line is dropped; errors are asked again."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from benchreg import RunOptions, load_task
from benchreg.core import registry
from benchreg.core.journal import JOURNAL_FILE, Journal
from benchreg.core.pipeline import build_system, prepare
from benchreg.core.run import aexecute
from benchreg.core.system import BaseSystem
from benchreg.core.types import Prediction, Request, Status


def test_round_trip_and_torn_last_line(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.append([Prediction("a", answer=1, raw_text="x", latency_s=0.5, metadata={"k": 1})])
    journal.append([Prediction("b", status=Status.ERROR, detail="HTTP 500")])
    journal.close()
    with (tmp_path / JOURNAL_FILE).open("a") as handle:
        handle.write('{"id": "c", "status": "ok", "ans')  # killed mid-write
    loaded = Journal(tmp_path).load()
    assert list(loaded) == ["a"]  # b errored: asked again; c was torn
    assert loaded["a"].answer == 1 and loaded["a"].metadata == {"k": 1}
    assert (tmp_path / JOURNAL_FILE).read_text().endswith("}\n")


class Flaky(BaseSystem):
    """Answers the gold index; crashes once it has answered ``crash_after`` requests."""

    asked: ClassVar[list[str]] = []

    def __init__(self, crash_after: int | None) -> None:
        self.name = "flaky"
        self.crash_after = crash_after

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        if self.crash_after is not None and len(Flaky.asked) >= self.crash_after:
            raise RuntimeError("power cut")
        Flaky.asked.extend(r.sample.id for r in requests)
        return [Prediction(r.sample.id, answer=r.sample.gold) for r in requests]


def _factory(cfg: Mapping[str, Any], ctx: Any) -> Flaky:
    return Flaky(cfg.get("crash_after"))


registry.systems.add("flaky_for_tests", _factory)


def test_a_resumed_run_asks_only_for_what_is_missing(tmp_path: Path) -> None:
    spec = load_task("molp2s/gap")
    options = RunOptions(batch_size=4, n_boot=0)
    prepared = prepare(spec, view="correct", roots={}, options=options)
    n = len(prepared.samples)
    Flaky.asked = []
    with pytest.raises(RuntimeError, match="power cut"):
        asyncio.run(
            aexecute(
                prepared,
                build_system(prepared, {"name": "flaky_for_tests", "crash_after": 8}),
                options=options,
                journal=Journal(tmp_path),
            )
        )
    assert len(Flaky.asked) == 8
    Flaky.asked = []
    result = asyncio.run(
        aexecute(
            prepared,
            build_system(prepared, {"name": "flaky_for_tests", "crash_after": None}),
            options=options,
            journal=Journal(tmp_path),
        )
    )
    assert len(Flaky.asked) == n - 8
    assert result.metrics["accuracy"].value == 1.0
    assert [p.sample_id for p in result.predictions] == [s.id for s in prepared.samples]


def test_a_journal_line_only_json_reads_is_read(tmp_path: Path) -> None:
    """Lines that `json` wrote and orjson does not read (NaN) are read as before; lines are
    written by orjson with non-ASCII text as it is."""

    old = '{"id": "a", "status": "ok", "answer": NaN, "metadata": {}}\n'
    (tmp_path / "journal.jsonl").write_text(old, "utf-8")
    journal = Journal(tmp_path)
    found = journal.load()
    assert found["a"].answer != found["a"].answer  # NaN
    journal.append([Prediction(sample_id="b", answer="漢字", raw_text="答")])
    journal.close()
    lines = (tmp_path / "journal.jsonl").read_text("utf-8").splitlines()
    assert lines[0] == old.strip() and "漢字" in lines[1]
    assert set(Journal(tmp_path).load()) == {"a", "b"}
