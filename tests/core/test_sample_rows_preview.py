"""samples.jsonl does not copy a predictions file: long answer lists are previewed, model answers
are written whole, and a run says which it did."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchreg import RunOptions, load_task
from benchreg.core.run import RunOutput, evaluate
from benchreg.core.scoring import ANSWER_PREVIEW_ITEMS, answer_preview, sample_rows
from benchreg.core.types import Prediction, Sample

N = ANSWER_PREVIEW_ITEMS


def _results(k: int) -> list[dict[str, object]]:
    return [{"source_id": f"s{i}", "region": {"page": i + 1}, "score": -float(i)} for i in range(k)]


def test_long_lists_are_cut_to_their_first_items_with_their_lengths() -> None:
    answer = {"results": _results(100), "latency_s": 0.5}
    shown, cut = answer_preview(answer)
    assert shown["results"] == _results(N)
    assert shown["latency_s"] == 0.5
    assert cut == {"results": 100}
    assert answer["results"] == _results(100)  # the answer itself is left alone


def test_short_answers_and_scalars_are_kept_as_they_are() -> None:
    for answer in ({"results": _results(N)}, 3, "text", None, list(range(N)), {"a": "x" * 500}):
        shown, cut = answer_preview(answer)
        assert shown == answer and cut is None
    long_list = list(range(3 * N))  # an answer that is a list is the answer: kept whole
    assert answer_preview(long_list) == (long_list, None)


def test_rows_preview_only_when_asked() -> None:
    samples = [Sample("q1", {}, gold=[{"source_id": "s0", "region": {"page": 1}}])]
    preds = [Prediction("q1", answer={"results": _results(30)})]
    per_sample = {"recall@10": np.array([1.0])}
    full = sample_rows(samples, preds, per_sample, "recall@10")[0]
    assert len(full["answer"]["results"]) == 30 and "answer_cut" not in full
    shown = sample_rows(samples, preds, per_sample, "recall@10", preview_answers=True)[0]
    assert len(shown["answer"]["results"]) == N
    assert shown["answer_cut"] == {"results": 30}
    assert shown["gold"] == samples[0].gold and shown["score"] == 1.0


def test_a_baseline_run_marks_its_answers_as_made_from_the_inputs(tmp_path: Path) -> None:
    run = evaluate(
        load_task("molp2s/gap"),
        view=None,
        roots={},
        system_cfg={"name": "baseline"},
        options=RunOptions(progress=False),
        output=RunOutput(tmp_path / "run", {}),
    )
    assert run.result is not None and run.result.answers_from_inputs
    rows = [json.loads(line) for line in (tmp_path / "run/samples.jsonl").read_text().splitlines()]
    assert rows and all("answer" in row for row in rows)
