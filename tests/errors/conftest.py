"""Fixtures of the bad-input catalogue: a finished earlier run (whose files must survive every
bad input untouched) and copies of the embedded samples to corrupt."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.errors.harness import run_in_process

SAMPLES = Path(__file__).resolve().parents[2] / "benchreg" / "families"


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("prior")
    folder = base / "run"
    outcome = run_in_process(
        ["task=molp2s/gap", "run.limit=3", "run.bootstrap=0", f"hydra.run.dir={folder}"],
        base,
        {},
    )
    assert outcome.code == 0, outcome.text
    assert (folder / "metrics.json").is_file()
    return folder


@pytest.fixture
def workspace(tmp_path: Path, finished_run: Path) -> Path:
    shutil.copytree(finished_run, tmp_path / "prior")
    return tmp_path


def copy_sample(family: str, dest: Path) -> Path:
    shutil.copytree(SAMPLES / family / "sample", dest)
    return dest
