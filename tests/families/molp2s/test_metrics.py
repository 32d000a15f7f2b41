"""The MolP2S counter and the accuracy the task entries score."""

from __future__ import annotations

import json
from pathlib import Path

from benchreg import load_task, run_task
from benchreg.core import registry
from benchreg.core.types import Prediction, Sample, Status


def sample(i: int, gold: int) -> Sample:
    return Sample(id=f"r{i}", input={"candidate_completed_smiles": ["C", "N", "O"]}, gold=gold)


SAMPLES = [sample(0, 0), sample(1, 1), sample(2, 2), sample(3, 0), sample(4, 1)]
PREDICTIONS = [
    Prediction("r0", answer=0),
    Prediction("r1", answer=2),
    Prediction("r2", answer=2, status=Status.OUT_OF_RANGE),  # never a hit, even if equal
    Prediction.missing("r3"),
    Prediction("r4", status=Status.ERROR, detail="timeout"),
]


def test_counter_reports_hits_and_tasks_only() -> None:
    counts = registry.counts.get("molp2s")(SAMPLES, PREDICTIONS)
    assert counts == {"hits": 1, "tasks": 5}


def test_accuracy_is_hits_over_every_sample() -> None:
    accuracy = registry.metrics.get("accuracy")()
    stats = accuracy.stats(SAMPLES, PREDICTIONS)
    assert accuracy.reduce(stats.sum(axis=0), len(SAMPLES)).tolist() == [0.2]
    assert accuracy.support(stats, PREDICTIONS) == (5, 5)


def test_accuracy_has_wilson_ci(release, tmp_path: Path) -> None:
    path = tmp_path / "pred.jsonl"
    lines = [{"record_id": f"r{i}", "selected_candidate_index": 0} for i in range(6)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    result = run_task(
        load_task("molp2s/gap"),
        view="correct",
        system_cfg={"name": "predictions", "path": str(path)},
        roots={"molp2s": str(release())},
    )
    accuracy = result.metrics["accuracy"]
    assert result.primary == "accuracy"
    assert accuracy.ci_method == "wilson"
    assert accuracy.ci95 is not None
    assert accuracy.ci95[0] < accuracy.value < accuracy.ci95[1]
