"""Multiruns: every MolP2S task x view in one sweep with glob, summaries, failed jobs."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # subprocesses; the in-process tests cover the logic


def read_summary(sweep: Path) -> list[dict[str, str]]:
    with (sweep / "summary.csv").open() as handle:
        return list(csv.DictReader(handle))


def test_all_45_molp2s_task_views(cli, tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = cli(
        "-m",
        "task=glob(molp2s/*)",
        "view=correct,shuffled,counterfactual",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read_summary(sweep)
    assert len(rows) == 45
    assert {r["status"] for r in rows} == {"ok"}
    assert len({(r["task"], r["view"]) for r in rows}) == 45
    for metrics_path in sweep.glob("*/metrics.json"):
        assert json.loads(metrics_path.read_text())["n"] > 0
    assert len(list(sweep.glob("*/metrics.json"))) == 45
    assert (sweep / "summary.md").read_text().count("| ok |") == 45
    # quiet by default (issue 21): one line per job, then the family's headline last; the
    # per-job summary table only with BENCHREG_VERBOSE=1 (summary.md always holds it)
    assert proc.stdout.count("| ok |") == 0 and "45 of 45 jobs succeeded." in proc.stdout
    lines = proc.stdout.splitlines()
    assert sum(" -> 0" in line for line in lines) == 45  # `<task> [<view>] <model>: ... -> <job>`
    last_screen = "\n".join(lines[-60:])
    assert "MolP2S: accuracy by view and the use-claim verdict per property" in last_screen
    assert "use-claim" in last_screen and "(a) " in last_screen
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("RDKit SMILES checks") <= 2  # printed once, then counted once
    analysis = json.loads((sweep / "analysis_molp2s_views.json").read_text())
    (model,) = analysis["models"]
    assert len(analysis["models"][model]) == 15


def test_failed_job_is_listed_with_its_error(cli, tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = cli("-m", "task=molp2s/gap", "view=correct,sideways", f"hydra.sweep.dir={sweep}")
    assert proc.returncode == 2
    rows = read_summary(sweep)
    assert [r["status"] for r in rows] == ["ok", "failed"]
    assert "no view 'sideways'" in rows[1]["error"]
    assert "1 of 2 jobs succeeded." in proc.stdout


def test_empty_glob_stops_the_sweep_in_one_line(cli, tmp_path: Path) -> None:
    proc = cli("-m", "task=glob(molp2/*)", f"hydra.sweep.dir={tmp_path / 'sweep'}")
    assert proc.returncode == 2
    errors = [x for x in proc.stderr.splitlines() if x.startswith("ERROR")]
    assert len(errors) == 1 and "matches no task" in errors[0], proc.stderr
    assert not (tmp_path / "sweep").exists()


def test_an_unknown_name_fails_only_its_job(cli, tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = cli("-m", "task=molp2s/gap,molp2s/gapp", "run.bootstrap=0", f"hydra.sweep.dir={sweep}")
    assert proc.returncode == 2
    summary = (sweep / "summary.md").read_text()
    assert "unknown task 'molp2s/gapp'" in summary and "| ok |" in summary


def test_analyze_subcommand_rewrites_summary(cli, tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = cli(
        "-m",
        "task=molp2s/carbon_nmr_degeneracy",
        "view=correct,shuffled,counterfactual,structure_only",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (sweep / "summary.md").unlink()
    again = cli("analyze", str(sweep))
    assert again.returncode == 0, again.stderr
    assert (sweep / "summary.md").is_file()
    report = (sweep / "analysis_molp2s_views.md").read_text()
    assert "Use claim supported iff" in report
    assert "carbon_nmr_degeneracy" in report


def test_sweep_files_hold_no_secret(cli, tmp_path: Path) -> None:
    """A secret on the command line is refused before anything is written or echoed."""
    sweep = tmp_path / "sweep"
    proc = cli(
        "-m",
        "task=molp2s/gap",
        "model=random",
        "+model.api_key=sk-very-secret",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 2
    assert "sk-very-secret" not in proc.stdout + proc.stderr
    assert not sweep.exists()
