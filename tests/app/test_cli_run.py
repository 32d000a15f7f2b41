"""The app as a user runs it: one job, its three output files, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # subprocesses; the in-process tests cover the logic


MOLP2S_COUNTS = {"hits", "tasks"}
STATUSES = {"ok", "missing", "invalid", "out_of_range", "error"}


def only_run_dir(cwd: Path) -> Path:
    dirs = [p for p in (cwd / "outputs" / "runs").glob("*/*") if p.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def test_headline_command_writes_three_files(cli, tmp_path: Path) -> None:
    proc = cli("task=molp2s/gap", "view=counterfactual")
    assert proc.returncode == 0, proc.stderr
    out = only_run_dir(tmp_path)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["task"] == "molp2s/gap" and metrics["view"] == "counterfactual"
    assert metrics["model"].startswith("baseline:")
    assert metrics["primary"] == "accuracy"
    assert metrics["n"] > 0
    accuracy = metrics["metrics"]["accuracy"]
    assert accuracy["denominator"] == metrics["n"]
    lo, hi = accuracy["ci95"]
    assert 0 <= lo <= accuracy["value"] <= hi <= 1
    assert set(metrics["counts"]) == MOLP2S_COUNTS
    assert set(metrics["statuses"]) == STATUSES
    assert sum(metrics["statuses"].values()) == metrics["n"]
    assert metrics["counts"]["tasks"] == metrics["n"]

    rows = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == metrics["n"]
    assert {"id", "raw_output", "answer", "status", "score"} <= set(rows[0])

    provenance = json.loads((out / "provenance.json").read_text())
    assert set(provenance["data_files_sha256"]) == {
        "data/gap/counterfactual.jsonl",
        "data/gap/counterfactual.labels.jsonl",
    }
    assert len(provenance["task_spec_sha256"]) == 64
    assert provenance["environment"]["packages"]["rdkit"]
    assert provenance["config"]["view"] == "counterfactual"
    assert "accuracy" in proc.stdout and "hits=" in proc.stdout


def test_run_dir_override_is_honoured(cli, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    proc = cli("task=molp2s/dipole", "model=random", f"hydra.run.dir={target}")
    assert proc.returncode == 0, proc.stderr
    assert (target / "metrics.json").is_file()
    assert not (tmp_path / "outputs").exists()


def test_duplicate_prediction_exits_2_with_one_line_and_keeps_outputs(cli, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    ok = cli("task=molp2s/gap", "model=random", f"hydra.run.dir={run_dir}")
    assert ok.returncode == 0, ok.stderr
    before = (run_dir / "metrics.json").read_bytes()

    sample = json.loads((run_dir / "samples.jsonl").read_text().splitlines()[0])
    pred = tmp_path / "pred.jsonl"
    line = json.dumps({"record_id": sample["id"], "selected_candidate_index": 0})
    pred.write_text(f"{line}\n{line}\n")
    proc = cli(
        "task=molp2s/gap", "model=predictions", f"model.path={pred}", f"hydra.run.dir={run_dir}"
    )
    assert proc.returncode == 2
    errors = [x for x in proc.stderr.splitlines() if x.startswith("ERROR")]
    assert "Traceback" not in proc.stderr
    assert len(errors) == 1, proc.stderr
    assert f"duplicate prediction for {sample['id']!r}" in errors[0]
    assert "Traceback" not in proc.stderr
    assert (run_dir / "metrics.json").read_bytes() == before


def test_unknown_view_exits_2(cli) -> None:
    proc = cli("task=molp2s/gap", "view=sideways")
    assert proc.returncode == 2
    assert "no view 'sideways'" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_predictions_path_exits_2(cli) -> None:
    proc = cli("task=molp2s/gap", "model=predictions")
    assert proc.returncode == 2
    assert "model.path" in proc.stderr


def test_a_secret_on_the_command_line_is_refused_and_never_echoed(cli, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = cli(
        "task=molp2s/gap",
        "model=random",
        "+model.api_key=sk-very-secret",
        f"hydra.run.dir={run_dir}",
    )
    assert proc.returncode == 2
    assert "model.api_key_env" in proc.stderr  # says where the key belongs
    assert "sk-very-secret" not in proc.stdout + proc.stderr
    assert not run_dir.exists() or not any(run_dir.rglob("*"))


def test_tasks_subcommand_lists_entries(cli) -> None:
    proc = cli("tasks", "--json")
    assert proc.returncode == 0, proc.stderr
    names = [row["name"] for row in json.loads(proc.stdout)]
    assert len([n for n in names if n.startswith("molp2s/")]) == 15


@pytest.mark.parametrize(
    ("name", "nearest"), [("molp2s/gapp", "molp2s/gap"), ("cblue/cmeee-v2", "cblue/CMeEE-V2")]
)
def test_unknown_task_is_one_line_with_the_nearest(cli, tmp_path: Path, name, nearest) -> None:
    proc = cli(f"task={name}")
    assert proc.returncode == 2
    errors = [x for x in proc.stderr.splitlines() if x.startswith("ERROR")]
    assert "Traceback" not in proc.stderr
    assert len(errors) == 1, proc.stderr
    assert f"unknown task {name!r}" in errors[0] and repr(nearest) in errors[0]
    assert not list(tmp_path.glob("outputs/runs/*/*"))  # no empty run folder left behind


def test_version_and_help(cli) -> None:
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("benchreg ")
    helped = cli("--help")
    assert helped.returncode == 0 and "python -m benchreg tasks" in helped.stdout


def test_prompts_then_score_them_as_predictions(cli, tmp_path: Path) -> None:
    proc = cli("task=molp2s/gap", "mode=prompts", "run.limit=4", f"hydra.run.dir={tmp_path / 'p'}")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(x) for x in (tmp_path / "p" / "prompts.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and f"{tmp_path / 'p' / 'prompts.jsonl'}" in proc.stdout
    pred = tmp_path / "pred.jsonl"  # an "external model" that always picks candidate 0
    answer = json.dumps({"selected_candidate_index": 0})
    lines = [json.dumps({"record_id": row["id"], "output": answer}) for row in rows]
    pred.write_text("\n".join(lines) + "\n")
    scored = cli(
        "task=molp2s/gap",
        "model=predictions",
        f"model.path={pred}",
        f"hydra.run.dir={tmp_path / 's'}",
    )
    assert scored.returncode == 0, scored.stderr
    scored_rows = [
        json.loads(x) for x in (tmp_path / "s" / "samples.jsonl").read_text().splitlines()
    ]
    status = {row["id"]: row["status"] for row in scored_rows}
    assert {status[row["id"]] for row in rows} == {"ok"}
    assert list(status.values()).count("missing") == len(status) - 4


def test_unknown_mode_exits_2(cli) -> None:
    proc = cli("task=molp2s/gap", "mode=score")
    assert proc.returncode == 2
    assert "mode='score'" in proc.stderr and "run|validate|prompts" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_task_alias_on_the_command_line(cli, tmp_path: Path) -> None:
    proc = cli("task=cblue/CMeIE-V2", f"hydra.run.dir={tmp_path / 'run'}")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["task"] == "cblue/CMeIE"


def test_predictions_file_leftovers_reach_metrics_json(cli, tmp_path: Path) -> None:
    pred = tmp_path / "pred.jsonl"
    pred.write_text(
        '{"record_id": "mp2s-0001", "selected_candidate_index": 0}\n'
        '{"record_id": "not-a-record", "selected_candidate_index": 0}\n'
    )
    proc = cli(
        "task=molp2s/gap",
        "model=predictions",
        f"model.path={pred}",
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert record["system"]["unknown_ids"] == ["not-a-record"]
    assert record["system"]["unknown_ids_total"] == 1
    assert record["statuses"]["missing"] == record["n"] - 1
