"""Fixtures for the app tests: compose the config in-process the way the CLI does, write a user's
task folder, and (for the slow end-to-end tests) run the CLI in a subprocess the way a user does."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

import benchreg.app.main  # noqa: F401  (registers the run-dir resolver)
from benchreg.core.resources import conf_dir

CLI = [sys.executable, "-m", "benchreg"]

USER_ENTRY = """\
defaults:
  - /task/_base/molp2s@_here_
  - _self_
name: mine/my_gap
description: my own gap task, added without touching the package
data: [data/gap]
metrics:
  - {name: accuracy, primary: true}
"""


def compose_app(*overrides: str, hydra_node: bool = False) -> DictConfig:
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        return compose("config", overrides=list(overrides), return_hydra_config=hydra_node)


@pytest.fixture
def app_config() -> Callable[..., DictConfig]:
    return compose_app


@pytest.fixture
def user_folder(tmp_path: Path) -> Callable[..., Path]:
    """`write(text, name, hydra_layout)`: a folder of the user's own entries, returned."""

    def write(text: str = USER_ENTRY, name: str = "mine/my_gap", hydra_layout: bool = True) -> Path:
        root = tmp_path / "my_tasks"
        path = root / ("tasks" if hydra_layout else "") / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return root

    return write


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: int = 600):
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    def call(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, cwd=tmp_path, env=env)

    return call


@pytest.fixture(scope="session")
def families_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One baseline sweep over the PromptCBLUE, reaction-MC and retrieval entries, shared by the
    browser tests that only read its report (each such sweep takes tens of seconds)."""
    sweep = tmp_path_factory.mktemp("families") / "sweep"
    proc = run_cli(
        "-m",
        "task=glob([cblue/*,reaction_mc/*_reference*,retrieval/*])",
        "model=baseline",
        f"hydra.sweep.dir={sweep}",
        cwd=sweep.parent,
    )
    assert proc.returncode in (0, 2), proc.stderr[-2000:]
    return sweep
