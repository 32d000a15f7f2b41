"""What an answer cut at the token limit becomes, and a warning that says exactly that: a cut
reply the parser cannot read is `invalid` (not `degraded`); one it reads is flagged `degraded`
(scored as given, invalid in the strict view)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from loguru import logger

from benchreg import RunOptions, load_task
from benchreg.app.modes import warn_truncated
from benchreg.core import registry
from benchreg.core.run import RunOutput, evaluate
from benchreg.core.system import BaseSystem, SystemContext
from benchreg.core.types import Prediction, Request

REPLIES = {  # (text, finish_reason): max_tokens ends the first two
    "unreadable": ('{"selected_candidate_index":', "length"),
    "readable": ('{"selected_candidate_index": 0}', "length"),
    "complete": ('{"selected_candidate_index": 0}', "stop"),
}


class Cut(BaseSystem):
    """Answers from ``replies`` (keys of REPLIES) by sample position."""

    needs_prompts = False
    replies: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.name = "cut"

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        out = []
        for request, kind in zip(requests, self.replies, strict=False):
            text, finish = REPLIES[kind]
            out.append(
                Prediction(request.sample.id, raw_text=text, metadata={"finish_reason": finish})
            )
        return out


def _factory(cfg: Mapping[str, Any], ctx: SystemContext) -> Cut:
    return Cut()


registry.systems.add("cut_for_tests", _factory)


def _record_and_warning(tmp_path: Path, replies: list[str]) -> tuple[dict[str, Any], list[str]]:
    Cut.replies = replies
    evaluation = evaluate(
        load_task("molp2s/gap"),
        view="correct",
        system_cfg={"name": "cut_for_tests"},
        roots={},
        options=RunOptions(progress=False, n_boot=0, limit=len(replies)),
        output=RunOutput(tmp_path),
    )
    record = evaluation.record
    assert record is not None
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
    try:
        warn_truncated(record)
    finally:
        logger.remove(sink)
    return record, lines


def test_unreadable_cut_answers_are_invalid_and_the_warning_says_so(tmp_path: Path) -> None:
    record, lines = _record_and_warning(tmp_path, ["unreadable"] * 6)
    assert record["truncated"] == 6 and record["degraded"] == 0
    assert record["statuses"]["invalid"] == 6
    assert record["truncated_as"] == {"statuses": {"invalid": 6}, "degraded": 0}
    (line,) = lines
    assert "6 of 6 answers stopped at the token limit" in line
    assert "status 6 invalid, none readable (so none flagged `degraded`)" in line
    assert "marked" not in line


def test_readable_cut_answers_are_flagged_degraded_and_counted(tmp_path: Path) -> None:
    record, lines = _record_and_warning(tmp_path, ["unreadable", "readable", "readable"])
    assert record["truncated"] == 3 and record["degraded"] == 2
    became = record["truncated_as"]
    assert became["degraded"] == 2 and became["statuses"]["invalid"] == 1
    assert sum(became["statuses"].values()) == 3
    (line,) = lines
    assert "3 of 3 answers stopped at the token limit" in line
    assert "status 1 invalid" in line and "2 of them read and flagged `degraded`" in line


def test_a_record_without_cut_answers_has_no_breakdown(tmp_path: Path) -> None:
    record, lines = _record_and_warning(tmp_path, ["complete"] * 3)
    assert "truncated_as" not in record and lines == []
