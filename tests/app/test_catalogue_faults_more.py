"""More of the catalogue's faults (issue 37, WEAK; issue 38's `.lock`): a failed sweep job is
redone by the same sweep (or with `run.overwrite=true`, still the same sweep), a damaged
metrics.json is listed as damaged, `temperature: .inf` in a task entry is one located line, and
no lock file stays behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg.app.callbacks import sweep_rows
from benchreg.app.sweepfolder import SWEEP_LOCK, claim_sweep, done_jobs, job_states, release
from benchreg.core.errors import BenchregError

SAMPLE_IDS = [f"mp2s-{i:04d}" for i in range(1, 17)]


def test_the_same_sweep_with_run_overwrite_is_the_same_sweep(tmp_path: Path) -> None:
    jobs = [["task=molp2s/gap", "view=correct"], ["task=molp2s/gap", "view=shuffled"]]
    release(claim_sweep(tmp_path, jobs))
    assert not (tmp_path / SWEEP_LOCK).exists()  # gone with the sweep
    again = [[*job, "run.overwrite=true"] for job in jobs]
    release(claim_sweep(tmp_path, again))
    recorded = json.loads((tmp_path / "sweep.json").read_text())["jobs"]
    assert recorded == jobs  # what the sweep is, as first planned
    with pytest.raises(BenchregError, match="holds another sweep"):
        claim_sweep(tmp_path, [[*job, "run.limit=3"] for job in jobs])


def test_a_corrected_sweep_takes_over_a_folder_whose_every_job_failed(tmp_path: Path) -> None:
    bad = [["task=molp2s/gap", "model.path=bad.jsonl"], ["task=molp2s/dipole", "model.path=bad"]]
    release(claim_sweep(tmp_path, bad))
    (tmp_path / "000_a").mkdir()
    (tmp_path / "000_a" / "error.json").write_text('{"error": "no prediction"}')
    (tmp_path / "000_a" / "journal.jsonl").write_text('{"id": "x", "status": "error"}\n')
    good = [["task=molp2s/gap", "model.path=good.jsonl"]]
    release(claim_sweep(tmp_path, good))
    assert json.loads((tmp_path / "sweep.json").read_text())["jobs"] == good
    assert not (tmp_path / "000_a").exists()
    (tmp_path / "000_b").mkdir()
    (tmp_path / "000_b" / "error.json").write_text("{}")
    (tmp_path / "000_b" / "journal.jsonl").write_text('{"id": "x", "status": "ok"}\n')
    with pytest.raises(BenchregError, match="holds another sweep"):  # an answer is kept
        claim_sweep(tmp_path, bad)
    assert (tmp_path / "000_b" / "journal.jsonl").exists()


def test_a_damaged_metrics_json_is_listed_as_damaged(tmp_path: Path) -> None:
    for name, text in (("000_cut", '{"task": "molp2s/gap", "met'), ("001_list", "[]")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.json").write_text("{}")
        (tmp_path / name / "metrics.json").write_text(text)
    states = {job.name: job for job in job_states(tmp_path)}
    assert {job.state for job in states.values()} == {"damaged"}
    cut = states["000_cut"].detail
    assert cut is not None and cut.startswith(str(tmp_path / "000_cut" / "metrics.json:1:"))
    assert "malformed JSON" in cut
    assert done_jobs(tmp_path) == 0
    rows = {row["job"]: row for row in sweep_rows(tmp_path)}
    assert rows["001_list"]["status"] == "damaged"
    assert rows["001_list"]["error"].endswith("metrics.json: holds a JSON list, not an object")


@pytest.mark.slow
def test_a_failed_sweep_job_is_redone_by_the_same_sweep(cli, tmp_path: Path) -> None:
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text('{"record_id": "mp2s-0001", "selected_candidate_in\n')
    sweep = tmp_path / "sweep"
    args = ["-m", "task=molp2s/gap", "model=predictions", f"model.path={predictions}"]
    args.append(f"hydra.sweep.dir={sweep}")
    failed = cli(*args)
    assert failed.returncode == 2 and "1 job failed" in failed.stdout, failed.stderr[-2000:]
    assert "the same sweep command runs these jobs again" in failed.stdout
    (job,) = [p for p in sweep.iterdir() if p.name.startswith("000_")]
    assert (job / "error.json").is_file()
    rows = [{"record_id": i, "selected_candidate_index": 0} for i in SAMPLE_IDS]
    predictions.write_text("".join(json.dumps(row) + "\n" for row in rows))
    redone = cli(*args)
    assert redone.returncode == 0, redone.stdout[-2000:] + redone.stderr[-2000:]
    assert "1 of 1 job succeeded" in redone.stdout
    assert not (job / "error.json").exists() and (job / "metrics.json").is_file()
    overwritten = cli(*args, "run.overwrite=true")  # still the same sweep: nothing to redo
    assert overwritten.returncode == 0, overwritten.stderr[-2000:]
    assert "another sweep" not in overwritten.stderr
    leftovers = [p for p in sweep.rglob("*") if p.name in (".lock", SWEEP_LOCK)]
    assert leftovers == []


@pytest.mark.slow
def test_the_corrected_sweep_command_runs_in_the_folder_of_a_failed_one(
    cli, tmp_path: Path
) -> None:
    bad, good = tmp_path / "bad.jsonl", tmp_path / "good.jsonl"
    bad.write_text("not json\n")
    good.write_text(
        "".join(
            json.dumps({"record_id": i, "selected_candidate_index": 0}) + "\n" for i in SAMPLE_IDS
        )
    )
    sweep = f"hydra.sweep.dir={tmp_path / 'sweep'}"
    first = cli("-m", "task=molp2s/gap", "model=predictions", f"model.path={bad}", sweep)
    assert first.returncode == 2 and "1 job failed" in first.stdout
    second = cli("-m", "task=molp2s/gap", "model=predictions", f"model.path={good}", sweep)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    assert "1 of 1 job succeeded" in second.stdout
    recorded = json.loads((tmp_path / "sweep" / "sweep.json").read_text())["jobs"]
    assert recorded == [["task=molp2s/gap", "model=predictions", f"model.path={good}"]]


@pytest.mark.slow
@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan"])
def test_a_non_finite_temperature_in_a_task_entry_is_one_located_line(
    cli, user_folder, tmp_path: Path, value: str
) -> None:
    entry = "defaults:\n  - /task/molp2s/gap@_here_\n  - _self_\nname: mine/hot\n"
    entry += f"generation:\n  temperature: {value}\n"
    root = user_folder(entry, name="mine/hot")
    run_dir = tmp_path / "run"
    proc = cli("task=mine/hot", f"hydra.searchpath=[file://{root}]", f"hydra.run.dir={run_dir}")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, proc.stderr
    assert f"{root / 'tasks' / 'mine' / 'hot.yaml'}:6" in errors[0]
    assert "generation.temperature" in errors[0]
    assert not run_dir.exists()
