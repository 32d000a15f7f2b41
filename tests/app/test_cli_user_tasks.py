"""Adding a task by YAML only: a user's folder, found through Hydra's search path or an env var."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.conftest import USER_ENTRY

pytestmark = pytest.mark.slow  # subprocesses; the in-process tests cover the logic


ENTRY = USER_ENTRY


def user_folder(tmp_path: Path, text: str, hydra_layout: bool = True) -> Path:
    root = tmp_path / "my_tasks"
    path = root / ("tasks" if hydra_layout else "") / "mine" / "my_gap.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return root


def test_user_task_via_hydra_searchpath(cli, tmp_path: Path) -> None:
    root = user_folder(tmp_path, ENTRY)
    proc = cli(
        "task=mine/my_gap", f"hydra.searchpath=[file://{root}]", f"hydra.run.dir={tmp_path / 'run'}"
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "run" / "metrics.json").is_file()
    assert "mine/my_gap" in proc.stdout


def test_user_task_via_env_var(cli, tmp_path: Path) -> None:
    root = user_folder(tmp_path, ENTRY, hydra_layout=False)
    proc = cli(
        "task=mine/my_gap",
        f"hydra.run.dir={tmp_path / 'run'}",
        env={"BENCHREG_TASKS_PATH": str(root)},
    )
    assert proc.returncode == 0, proc.stderr


def test_user_task_sweeps_with_glob(cli, tmp_path: Path) -> None:
    root = user_folder(tmp_path, ENTRY)
    proc = cli(
        "-m",
        "task=glob(mine/*)",
        "view=correct,shuffled",
        f"hydra.searchpath=[file://{root}]",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    )
    assert proc.returncode == 0, proc.stderr
    assert len((tmp_path / "sweep" / "summary.csv").read_text().splitlines()) == 3


def test_unknown_key_exits_2_naming_file_and_key(cli, tmp_path: Path) -> None:
    root = user_folder(tmp_path, ENTRY + "colour: blue\n")
    proc = cli("task=mine/my_gap", f"hydra.searchpath=[file://{root}]")
    assert proc.returncode == 2
    assert f"{root}/tasks/mine/my_gap.yaml:9: unknown key 'colour'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_metric_exits_2_naming_file_and_key(cli, tmp_path: Path) -> None:
    root = user_folder(tmp_path, ENTRY.replace("name: accuracy", "name: acuracy"))
    proc = cli("task=mine/my_gap", f"hydra.searchpath=[file://{root}]")
    assert proc.returncode == 2
    assert f"{root}/tasks/mine/my_gap.yaml:8: metrics: unknown metric 'acuracy'" in proc.stderr
    assert "did you mean 'accuracy'" in proc.stderr


def test_interpolation_exits_2_naming_file_and_line(cli, tmp_path: Path) -> None:
    root = user_folder(tmp_path, ENTRY.replace("my own gap task", "copy of ${task.name}"))
    proc = cli("task=mine/my_gap", f"hydra.searchpath=[file://{root}]")
    assert proc.returncode == 2
    assert f"{root}/tasks/mine/my_gap.yaml:5: interpolation" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_tasks_flags_broken_user_entries(cli, tmp_path: Path) -> None:
    root = user_folder(tmp_path, ENTRY + "colour: blue\n")
    proc = cli("tasks", f"hydra.searchpath=[file://{root}]")
    assert proc.returncode == 0, proc.stderr
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("mine/my_gap ")]
    assert "BROKEN" in line and "unknown key 'colour'" in line
