"""Numbers that cannot look valid when they are not: failed requests make a run incomplete,
truncated and degraded answers are visible (with a strict view of every metric), answers are
journaled as they arrive, and a registered secret never reaches a file."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from benchreg import RunOptions, load_task
from benchreg.core import provenance, registry
from benchreg.core.run import RunOutput, evaluate
from benchreg.core.system import BaseSystem, SystemContext
from benchreg.core.types import Prediction, Request, Status

FAST = RunOptions(progress=False, n_boot=0, batch_size=4)
SECRET = "sk-test-0123456789abcdefghij"


class Scripted(BaseSystem):
    """Answers from a script keyed by sample position: text, an error, or a cut answer."""

    needs_prompts = False
    script: ClassVar[dict[int, Any]] = {}
    journal_lines_seen: ClassVar[list[int]] = []

    def __init__(self, folder: Path | None) -> None:
        self.name = "scripted"
        self.folder = folder
        self.seen = 0

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        out = []
        for request in requests:
            kind = self.script.get(self.seen, "ok")
            self.seen += 1
            if kind == "error":
                pred = Prediction(request.sample.id, status=Status.ERROR, detail="HTTP 503: gone")
            elif kind == "cut":
                pred = Prediction(
                    request.sample.id,
                    raw_text='{"selected_candidate_index": 0}',
                    metadata={"finish_reason": "length"},
                )
            elif kind == "echo":
                pred = Prediction(request.sample.id, raw_text=f"my key is {SECRET} and 0")
            else:
                pred = Prediction(request.sample.id, raw_text='{"selected_candidate_index": 0}')
            if self.on_answer is not None:
                self.on_answer(pred)
                if self.folder is not None:
                    journal = self.folder / "journal.jsonl"
                    lines = journal.read_text().count("\n") if journal.exists() else 0
                    Scripted.journal_lines_seen.append(lines)
            out.append(pred)
        return out


def _factory(cfg: Mapping[str, Any], ctx: SystemContext) -> Scripted:
    return Scripted(Path(cfg["folder"]) if cfg.get("folder") else None)


registry.systems.add("scripted_for_tests", _factory)


def run(folder: Path, script: dict[int, Any], **options: Any) -> dict[str, Any]:
    Scripted.script = script
    Scripted.journal_lines_seen = []
    evaluation = evaluate(
        load_task("molp2s/gap"),
        view="correct",
        system_cfg={"name": "scripted_for_tests", "folder": str(folder)},
        roots={},
        options=replace(FAST, **options),
        output=RunOutput(folder),
    )
    assert evaluation.record is not None
    return evaluation.record


def test_failed_requests_make_the_run_incomplete_and_the_rerun_asks_only_them(
    tmp_path: Path,
) -> None:
    record = run(tmp_path, {1: "error", 5: "error"})
    assert record["complete"] is False
    assert record["incomplete"]["errors"] == 2
    assert record["incomplete"]["by_cause"] == {"HTTP 503": 2}
    Scripted.script = {}
    again = run(tmp_path, {})
    assert again["complete"] is True and again["statuses"]["error"] == 0
    rows = [json.loads(line) for line in (tmp_path / "journal.jsonl").read_text().splitlines()]
    assert len(rows) == again["n"] + 2  # the first attempt's answers, then the two asked again


def test_accepted_errors_are_wrong_answers_and_said_so(tmp_path: Path) -> None:
    record = run(tmp_path, {0: "error"}, accept_errors=True)
    assert record["complete"] is True and record["errors_accepted"] == 1
    assert record["statuses"]["error"] == 1


def test_truncated_answers_are_counted_degraded_and_scored_strictly(tmp_path: Path) -> None:
    record = run(tmp_path, {0: "cut", 2: "cut"})
    assert record["truncated"] == 2 and record["degraded"] == 2
    rows = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert [r["degraded"] for r in rows[:3] if "degraded" in r] == [
        "stopped at the token limit (finish_reason: length)"
    ] * 2
    lenient, strict = record["metrics"]["accuracy"], record["strict"]["accuracy"]
    hits_cut = sum(1 for r in rows[:3:2] if r["score"] == 1.0)
    assert lenient["value"] * record["n"] - strict["value"] * record["n"] == pytest.approx(hits_cut)
    assert record["strict_means"].startswith("degraded answers")


def test_no_strict_view_without_degraded_answers(tmp_path: Path) -> None:
    record = run(tmp_path, {})
    assert "strict" not in record and record["truncated"] == 0


def test_each_answer_reaches_the_journal_as_it_arrives(tmp_path: Path) -> None:
    run(tmp_path, {})
    assert Scripted.journal_lines_seen[:5] == [1, 2, 3, 4, 5]  # batches of 4: per answer
    rows = (tmp_path / "journal.jsonl").read_text().splitlines()
    assert len(rows) == len({json.loads(r)["id"] for r in rows})  # not again per batch


def test_a_registered_secret_echoed_by_a_system_reaches_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(provenance, "_secret_values", set())
    provenance.register_secret(SECRET)
    run(tmp_path, {0: "echo"})
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text("utf-8", errors="replace"), path
    rows = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert rows[0]["raw_output"] == f"my key is {provenance.REDACTED} and 0"
