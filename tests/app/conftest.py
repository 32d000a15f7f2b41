"""Helpers to run the CLI in a subprocess, the way a user does."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "benchreg"]


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
