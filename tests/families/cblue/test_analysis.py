"""A 16-task multirun: per-task metrics, the overall in the sweep summary, results.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchreg.core.analysis import read_jobs
from benchreg.families.cblue.analysis import cblue_overall, overall, write_results_json
from benchreg.families.cblue.catalogue import TASK_NAMES

from .cblue_helpers import load_json


def sweep(tmp_path: Path, *overrides: str) -> Path:
    out = tmp_path / "sweep"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchreg",
            "-m",
            "task=glob(cblue/*)",
            *overrides,
            f"hydra.sweep.dir={out}",
            "run.bootstrap=100",
        ],
        cwd=tmp_path,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def sample_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m benchreg -m task='glob(cblue/*)'` on the embedded sample (baseline model)."""
    return sweep(tmp_path_factory.mktemp("cblue"))


def test_glob_multirun_on_the_embedded_sample(sample_sweep: Path) -> None:
    out = sample_sweep
    jobs = read_jobs(out)
    assert sorted(j.task for j in jobs) == sorted(f"cblue/{t}" for t in TASK_NAMES)
    assert {j.model for j in jobs} == {"baseline:cblue_trivial"}
    analysis = load_json(out / "analysis_cblue_overall.json")
    (group,) = analysis["groups"]
    assert group["complete"] and len(group["tasks"]) == 16
    expected = sum(j.metrics["metrics"][j.metrics["primary"]]["value"] for j in jobs) / 16
    assert group["overall"] == pytest.approx(expected, abs=1e-12)
    assert "overall (mean of 16)" in (out / "summary.md").read_text("utf-8")
    results = load_json(out / "results.json")
    assert list(results) == list(TASK_NAMES)
    assert all(len(entries) == 4 for entries in results.values())
    assert results["CMeEE-V2"][0] == {"sample_id": "sample-cmeee-v2-1", "answer": []}


def test_overall_and_results_json_match_the_official_on_a_reference_set(
    tmp_path: Path, raw: Path, reference: Path
) -> None:
    predictions = reference / "perturb_drop_last.json"
    out = sweep(tmp_path, "model=predictions", f"model.path={predictions}", f"roots.cblue={raw}")
    (group,) = load_json(out / "analysis_cblue_overall.json")["groups"]
    expected = load_json(reference / "perturb_drop_last.scores.json")
    assert group["overall"] == pytest.approx(expected["overall_16"], abs=1e-9)
    for task in TASK_NAMES:
        assert group["tasks"][task]["value"] == pytest.approx(
            expected["tasks"][task]["primary_value"], abs=1e-9
        )
    assert load_json(out / "results.json") == load_json(predictions)


def test_test_split_sweep_writes_the_official_results_json(tmp_path: Path, raw: Path) -> None:
    """Text predictions for the test split (all empty) -> exactly the upstream results.json."""
    out = sweep(
        tmp_path,
        "view=test",
        "model=predictions",
        f"model.path={raw / 'test_predictions.json'}",
        f"roots.cblue={raw}",
    )
    written = (out / "results.json").read_text("utf-8")
    assert json.loads(written) == load_json(raw / "results.json")
    assert list(json.loads(written)) == list(load_json(raw / "results.json"))


def test_incomplete_and_multiple_groups(sample_sweep: Path, tmp_path: Path) -> None:
    out = sample_sweep
    jobs = [j for j in read_jobs(out) if not j.task.endswith("MedDG")]
    (group,) = overall(jobs)["groups"]
    assert not group["complete"] and group["overall"] is None
    assert group["missing_tasks"] == ["MedDG"]
    report = cblue_overall(jobs)
    assert "mean of 15 of 16 tasks (not the overall)" in report.markdown
    other = read_jobs(out)
    for job in other:
        job.metrics["model"] = "other"
    written = write_results_json(jobs + other, tmp_path / "results.json")
    assert sorted(p.name for p in written) == [
        "results_baseline-cblue_trivial_dev.json",
        "results_other_dev.json",
    ]
    assert len(json.loads(written[1].read_text("utf-8"))) in (15, 16)
