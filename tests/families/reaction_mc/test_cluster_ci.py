"""Issue 37 item 1: reaction-MC questions drawn from one reaction table share it, so every
interval of the task resamples whole tables (``cluster: meta.release.parent_table_id``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import binomtest

from benchreg import load_task, run_task
from benchreg.core.outputs import write_run

ALL = "all_varying"
TABLES, PER_TABLE = 6, 5


def wilson_ci(k: int, n: int) -> tuple[float, float]:
    """An independent Wilson interval (scipy's)."""
    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return ci.low, ci.high


def _release(question, release) -> Path:
    qs = [
        question(f"tab{t}_q{q}", ALL, [{"yield": 80}, {"yield": 40}])  # option 0 is right
        for t in range(TABLES)
        for q in range(1, PER_TABLE + 1)
    ]
    return release({ALL: qs})


def _predictions(tmp_path: Path) -> Path:
    # correlated within a table: the first half of the tables all right, the rest all wrong
    answers = {
        f"tab{t}_q{q}": 0 if t < TABLES // 2 else 1
        for t in range(TABLES)
        for q in range(1, PER_TABLE + 1)
    }
    path = tmp_path / "pred.json"
    path.write_text(json.dumps(answers), encoding="utf-8")
    return path


def _run(task, root: Path, predictions: Path):
    return run_task(
        task,
        view=None,
        system_cfg={"name": "predictions", "path": str(predictions)},
        roots={"reaction_mc": str(root)},
    )


def test_reaction_mc_intervals_are_clustered_by_table(question, release, tmp_path: Path) -> None:
    task = load_task(f"reaction_mc/{ALL}")
    assert task.spec.cluster == "meta.release.parent_table_id"
    root, predictions = _release(question, release), _predictions(tmp_path)
    result = _run(task, root, predictions)
    write_run(tmp_path / "run", result, {})
    record = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    for name in ("avg_relative_score", "exact_match_accuracy", "avg_yield_ratio"):
        entry = record["metrics"][name]
        assert entry["ci_method"] == "cluster bootstrap"
        assert entry["clusters"] == TABLES
    exact = result.metrics["exact_match_accuracy"]
    assert exact.value == 0.5
    # six tables of which three are right: the mean of 6 cluster draws, far wider than the
    # interval of 30 independent questions
    iid = wilson_ci(15, 30)
    assert exact.ci95[1] - exact.ci95[0] > 1.5 * (iid[1] - iid[0])


def test_without_the_cluster_the_interval_is_the_iid_one(
    question, release, tmp_path: Path
) -> None:
    task = load_task(f"reaction_mc/{ALL}").evolve(cluster=None)
    result = _run(task, _release(question, release), _predictions(tmp_path))
    exact = result.metrics["exact_match_accuracy"]
    assert exact.ci_method == "wilson" and exact.clusters is None
    assert exact.ci95 == pytest.approx(wilson_ci(15, 30), abs=1e-12)
