"""A 16-task multirun: per-task metrics, the overall in the sweep summary, results.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    assert "mean of 15 of the 16 tasks: not the overall" in report.markdown
    other = read_jobs(out)
    for job in other:
        job.metrics["model"] = "other"
        job.metrics["model_id"] = "other-model"
    written = write_results_json(jobs + other, tmp_path / "results.json")
    assert sorted(p.name for p in written) == [
        "results_baseline-cblue_trivial_dev.json",
        "results_other_dev.json",
    ]
    assert len(json.loads(written[1].read_text("utf-8"))) in (15, 16)


# --- two models whose predictions files have the same name (issue 13) ---------------------------


def _write_job(sweep_dir: Path, name: str, task: str, model: dict[str, Any], root: Path) -> None:
    from benchreg import RunOptions, load_task, run_task
    from benchreg.core.outputs import write_run

    result = run_task(
        load_task(f"cblue/{task}"),
        view=None,
        system_cfg=model,
        roots={"cblue": str(root)},
        options=RunOptions(n_boot=0, progress=False),
    )
    folder = sweep_dir / name
    folder.mkdir(parents=True)
    write_run(folder, result, {"task": f"cblue/{task}", "model": model})


@pytest.fixture(scope="module")
def two_model_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """16 tasks x 2 models, A = the official gold (perfect) and B = every answer empty, both
    given as a file called results.json, in one sweep folder (written in process)."""
    from tests.conftest import shared_path

    raw = shared_path("data", "promptcblue", "raw")
    reference = shared_path("data", "promptcblue", "reference")
    base = tmp_path_factory.mktemp("two_models")
    files = {}
    for model, source in (("A", "perfect.json"), ("B", "empty.json")):
        path = base / model / "results.json"
        path.parent.mkdir()
        path.write_bytes((reference / source).read_bytes())
        files[model] = path
    sweep_dir = base / "sweep"
    k = 0
    for model in ("A", "B"):
        for task in TASK_NAMES:
            cfg = {"name": "predictions", "path": str(files[model])}
            _write_job(sweep_dir, f"{k}_{task}", task, cfg, raw)
            k += 1
    return sweep_dir, files["A"], files["B"]


def test_same_named_predictions_files_are_two_models(
    two_model_sweep: tuple[Path, Path, Path], reference: Path
) -> None:
    from benchreg.core.analysis import run_analyses, short_identity, write_reports
    from benchreg.core.io import sha256_file
    from benchreg.core.summary import summary_csv, summary_markdown, summary_row

    sweep_dir, file_a, file_b = two_model_sweep
    jobs = read_jobs(sweep_dir)
    assert len(jobs) == 32 and {j.model for j in jobs} == {"predictions:results.json"}
    id_a, id_b = (f"predictions:sha256={sha256_file(p)}" for p in (file_a, file_b))
    assert {j.model_id for j in jobs} == {id_a, id_b}

    (report,) = run_analyses(jobs)
    assert report.error is None
    by_id = {g["model_id"]: g for g in report.data["groups"]}
    assert set(by_id) == {id_a, id_b}
    perfect = load_json(reference / "perfect.scores.json")["overall_16"]
    empty = load_json(reference / "empty.scores.json")["overall_16"]
    assert by_id[id_a]["complete"] and by_id[id_b]["complete"]
    assert by_id[id_a]["overall"] == pytest.approx(perfect, abs=1e-9)
    assert by_id[id_b]["overall"] == pytest.approx(empty, abs=1e-9)
    # the display name is kept; the short identity tells the two apart
    assert by_id[id_a]["model"] == f"predictions:results.json [{short_identity(id_a)}]"
    assert short_identity(id_a) == id_a[: len("predictions:sha256=") + 12]
    assert short_identity(id_a) in report.markdown and short_identity(id_b) in report.markdown

    # one results file per model, each holding exactly that model's answers
    out = sweep_dir / "analysis"
    write_reports(out, [report])
    written = {name: load_json(out / name) for name in report.data["results_files"]}
    assert len(written) == 2
    assert load_json(file_a) in written.values() and load_json(file_b) in written.values()

    # the summary shows the identity beside the display name
    rows = [summary_row(j.dir.name, j.metrics, None) for j in jobs]
    assert {r["model_id"] for r in rows} == {id_a, id_b}
    assert f"| {id_b} |" in summary_markdown(rows)  # as metrics.json holds it
    assert id_a in summary_csv(rows)


def test_two_jobs_of_one_model_task_and_view_are_a_named_error(
    two_model_sweep: tuple[Path, Path, Path],
) -> None:
    from benchreg.core.analysis import DuplicateJobError, run_analyses

    sweep_dir, _, _ = two_model_sweep
    jobs = read_jobs(sweep_dir)
    again = read_jobs(sweep_dir)[0]
    again.dir = sweep_dir / "copy_of_the_first_job"
    with pytest.raises(DuplicateJobError) as caught:
        cblue_overall([*jobs, again])
    assert str(jobs[0].dir) in str(caught.value) and str(again.dir) in str(caught.value)
    (report,) = run_analyses([*jobs, again])  # the sweep summary gets the failure, not a crash
    assert report.error and "copy_of_the_first_job" in report.markdown
    assert "overall" not in report.data
