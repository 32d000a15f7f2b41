"""Models in sweeps are told apart by identity (issue 13): JobRecord.model_id, labels, the
duplicate-job error, the failed-analysis report and the summary's model_id column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchreg.core.analysis import (
    DuplicateJobError,
    JobRecord,
    run_analyses,
    short_identity,
    system_labels,
    unique_jobs,
)
from benchreg.core.summary import summary_csv, summary_markdown, summary_row

SHA_A = "0123456789ab" + "c" * 52
SHA_B = "fedcba987654" + "d" * 52


def record(
    folder: Path, model: str, model_id: str | None, *, task: str = "molp2s/gap", **config: Any
) -> JobRecord:
    metrics: dict[str, Any] = {"task": task, "family": "molp2s", "view": "correct", "model": model}
    if model_id is not None:
        metrics["model_id"] = model_id
    provenance = {"config": {"model": config}, "data_root": "/data"} if config else {}
    return JobRecord(folder, metrics, provenance)


def test_model_id_falls_back_to_the_display_name_for_old_run_folders(tmp_path: Path) -> None:
    assert record(tmp_path, "baseline:x", None).model_id == "baseline:x"
    assert record(tmp_path, "shown", "real-id").model_id == "real-id"


def test_short_identity() -> None:
    assert short_identity(f"predictions:sha256={SHA_A}") == "predictions:sha256=0123456789ab"
    assert short_identity("random(seed=0)") == "random(seed=0)"
    long_a = "model-x@http://localhost:8080/v1#" + "q" * 40
    long_b = "model-x@http://localhost:8080/v1#" + "r" * 40
    assert len(short_identity(long_a)) <= 48
    assert short_identity(long_a) != short_identity(long_b)


def test_labels_disambiguate_same_names_only(tmp_path: Path) -> None:
    a = record(tmp_path / "a", "predictions:results.json", f"predictions:sha256={SHA_A}")
    b = record(tmp_path / "b", "predictions:results.json", f"predictions:sha256={SHA_B}")
    c = record(tmp_path / "c", "baseline:molp2s_rdkit", "baseline:molp2s_rdkit")
    labels = system_labels([a, b, c])
    assert labels[a.system_key] == "predictions:results.json [predictions:sha256=0123456789ab]"
    assert labels[b.system_key] == "predictions:results.json [predictions:sha256=fedcba987654]"
    assert labels[c.system_key] == "baseline:molp2s_rdkit"


def test_a_label_ties_predictions_files_but_never_model_servers(tmp_path: Path) -> None:
    view_files = [
        record(tmp_path / v, "mine", f"predictions:sha256={sha}", label="mine")
        for v, sha in (("c", SHA_A), ("s", SHA_B))
    ]
    assert {j.group for j in view_files} == {"label:mine"}
    servers = [
        record(tmp_path / "x", "gpt", "gpt@http://a#1", label="gpt"),
        record(tmp_path / "y", "gpt", "gpt@http://b#2", label="gpt"),
    ]
    assert {j.group for j in servers} == {"gpt@http://a#1", "gpt@http://b#2"}
    assert len(set(system_labels(servers).values())) == 2


def test_two_jobs_of_one_model_task_and_view_name_both_folders(tmp_path: Path) -> None:
    first = record(tmp_path / "job_0", "m", "id-1")
    second = record(tmp_path / "job_1", "m (relabelled)", "id-1")
    other = record(tmp_path / "job_2", "m", "id-2")
    assert len(unique_jobs([first, other], "x")) == 2
    with pytest.raises(DuplicateJobError) as caught:
        unique_jobs([first, other, second], "x")
    message = str(caught.value)
    assert str(first.dir) in message and str(second.dir) in message and "identity id-1" in message


def test_a_failed_analysis_becomes_a_report_that_says_why(tmp_path: Path) -> None:
    jobs = [record(tmp_path / f"job_{i}", "m", "id-1") for i in range(2)]
    for job in jobs:
        job.provenance["task_spec"] = {"analyses": [{"name": "molp2s_views"}]}
        job.__dict__["samples"] = []
    (report,) = run_analyses(jobs)
    assert report.name == "molp2s_views" and report.error
    assert "job_0" in report.markdown and "job_1" in report.markdown
    assert report.data == {"error": report.error}


def test_summary_has_the_identity_beside_the_display_name() -> None:
    metric = {"value": 0.5, "n": 4, "denominator": 4, "ci95": [0.1, 0.9]}
    base = {"task": "t", "view": "v", "model": "predictions:results.json", "primary": "acc",
            "metrics": {"acc": metric}}
    rows = [
        summary_row("0", {**base, "model_id": f"predictions:sha256={SHA_A}", "degraded": 2}, None),
        summary_row("1", {**base, "model_id": f"predictions:sha256={SHA_B}"}, None),
        summary_row("2", {k: v for k, v in base.items()}, None),  # an old run folder
        summary_row("3", None, {"task": "t", "error": "boom"}),
    ]
    assert [r["model_id"] for r in rows][2:] == ["predictions:results.json", None]
    csv_text = summary_csv(rows)
    assert csv_text.splitlines()[0].split(",")[3:5] == ["model", "model_id"]
    assert f"predictions:sha256={SHA_A}" in csv_text  # in full in the CSV
    md = summary_markdown(rows)
    assert "| model | model id |" in md
    # the same string as the job's metrics.json holds (issue 19: one model id in every output)
    assert f"| predictions:results.json | predictions:sha256={SHA_A} |" in md
    assert f"| predictions:results.json | predictions:sha256={SHA_B} |" in md
    assert "2 answer(s) in 1 job(s) were read only by a fallback" in md
