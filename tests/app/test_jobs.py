"""One job in-process, per mode: run, validate (exit status on errors), prompts export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg.app.callbacks import report_sweep
from benchreg.app.main import run_job
from benchreg.core import pipeline
from benchreg.core.errors import BenchregError
from benchreg.core.outputs import write_error
from benchreg.core.validation import Finding


def test_prompts_mode_writes_one_row_per_sample(app_config, tmp_path: Path, capsys) -> None:
    cfg = app_config("task=molp2s/gap", "view=shuffled", "mode=prompts", "run.limit=3")
    result = run_job(cfg, tmp_path)
    path = tmp_path / "prompts.jsonl"
    assert result["prompts"] == str(path) and not result["failed"]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 3
    assert len({row["id"] for row in rows}) == 3
    for row in rows:
        assert set(row) == {"id", "messages", "answer_schema", "parser"}
        assert [m["role"] for m in row["messages"]] == ["system", "user"]
        assert all(m["content"].strip() for m in row["messages"])
        assert row["answer_schema"] == "candidate_index" and row["parser"] == "molp2s_json"
    out = capsys.readouterr().out
    assert str(path) in out and "model=predictions" in out


def test_prompts_mode_without_limit_covers_the_view(app_config, tmp_path: Path) -> None:
    run_job(app_config("task=cblue/CMeIE", "mode=prompts"), tmp_path)
    rows = (tmp_path / "prompts.jsonl").read_text().splitlines()
    assert len(rows) == 4  # the embedded PromptCBLUE sample has 4 records per task
    assert json.loads(rows[0])["parser"]


def test_validate_reports_where_the_file_went(app_config, tmp_path: Path, capsys) -> None:
    result = run_job(app_config("task=reaction_mc/single_varying", "mode=validate"), tmp_path)
    report = json.loads((tmp_path / "validation.json").read_text())
    assert report["errors"] == 0 and report["records"] > 0
    assert not result["failed"]
    assert f"report: {tmp_path / 'validation.json'}" in capsys.readouterr().out


def test_validate_with_errors_marks_the_job_failed(app_config, tmp_path: Path, monkeypatch) -> None:
    bad = [Finding("q7", "answer is not among the options", "error"), Finding("q8", "odd")]
    monkeypatch.setattr(pipeline, "run_validators", lambda *args: bad)
    result = run_job(app_config("task=reaction_mc/single_varying", "mode=validate"), tmp_path)
    assert result["failed"]
    report = json.loads((tmp_path / "validation.json").read_text())
    assert report["errors"] == 1 and len(report["findings"]) == 2


def test_unknown_mode_stops_before_loading(app_config, tmp_path: Path) -> None:
    with pytest.raises(BenchregError, match="bad value mode='evaluate'"):
        run_job(app_config("mode=evaluate"), tmp_path)
    assert not any(tmp_path.iterdir())


def test_sweep_summary_is_printed_and_failures_counted(
    app_config, tmp_path, capsys, monkeypatch
) -> None:
    ok = tmp_path / "0_molp2s-gap_baseline"
    ok.mkdir()
    run_job(app_config("task=molp2s/gap", "run.bootstrap=0"), ok)
    failed = tmp_path / "1_molp2s-gap_sideways_baseline"
    failed.mkdir()
    write_error(failed, "molp2s/gap", "sideways", "baseline", "task molp2s/gap has no view")
    capsys.readouterr()
    assert report_sweep(tmp_path) == 1
    out = capsys.readouterr().out
    assert "| 0_molp2s-gap_baseline | molp2s/gap |" not in out  # the per-job table: verbose
    assert "  1_molp2s-gap_sideways_baseline: failed: task molp2s/gap has no view" in out
    assert "1 of 2 jobs succeeded.\n1 job failed." in out
    assert "| 0_molp2s-gap_baseline | molp2s/gap |" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "summary.md").is_file() and (tmp_path / "summary.csv").is_file()
    monkeypatch.setenv("BENCHREG_VERBOSE", "1")
    assert report_sweep(tmp_path) == 1
    assert "| 0_molp2s-gap_baseline | molp2s/gap |" in capsys.readouterr().out
