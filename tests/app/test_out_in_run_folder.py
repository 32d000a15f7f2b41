"""Every command that writes beside runs refuses an output inside a run folder (a run folder holds
only its own run's files): report --out, compare --out, leaderboard --out, export wandb --dir and
a local MLflow store. One line, exit 2, the run folder unchanged. And a sweep is not compared with
itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg.app.commands import main
from tests.app.test_report import write_job
from tests.app.test_tracking import need


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    folder = tmp_path / "sweep"
    write_job(folder, "000_t-x_v_a", "t/x", "v", "a", [1.0, 0.0, 1.0, 1.0])
    write_job(folder, "001_t-x_v_b", "t/x", "v", "b", [0.0, 0.0, 1.0, 1.0])
    return folder


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize(
    "args",
    [
        ["report", "{sweep}", "--out", "{run}/report"],
        ["compare", "{sweep}", "--a", "a", "--b", "b", "--out", "{run}/compare"],
        ["leaderboard", "{sweep}", "--out", "{run}"],
        ["export", "wandb", "{sweep}", "--dir", "{run}/wandb"],
        ["export", "mlflow", "{sweep}", "--tracking-uri", "sqlite:///{run}/mlflow.db"],
    ],
    ids=["report", "compare", "leaderboard", "wandb", "mlflow"],
)
def test_an_output_inside_a_run_folder_is_refused(
    args: list[str], sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = sweep / "000_t-x_v_a"
    before = _files(run)
    argv = [a.format(sweep=sweep, run=run) for a in args]
    if argv[0] == "export":
        need("wandb" if argv[1] == "wandb" else "mlflow")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "inside the run folder" in err, err
    assert _files(run) == before


def test_a_sweep_compared_with_itself_is_refused(
    sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    single = tmp_path / "single"
    write_job(single, "000_t-x_v_a", "t/x", "v", "a", [1.0, 0.0, 1.0, 1.0])
    assert main(["compare", str(single), str(single), "--gate", "--margin", "0.05"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "A and B are the same runs" in err
    assert not (single / "compare").exists()
