"""The built wheel carries the app config and the task registry, and runs outside the checkout."""

from __future__ import annotations

import json
import site
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_installs_and_runs(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(PROJECT),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = dist.glob("benchreg-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    target = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-compile",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    # Dependencies come from this environment; its site dir is appended (not processed as a
    # site dir, so this checkout's editable .pth does not leak in).
    (target / "_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")

    work = tmp_path / "work"
    work.mkdir()
    where = subprocess.run(
        [str(python), "-c", "import benchreg; print(benchreg.__file__)"],
        cwd=work,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert where.startswith(str(target)), where

    run = subprocess.run(
        [
            str(python),
            "-m",
            "benchreg",
            "task=molp2s/gap",
            "view=counterfactual",
            f"hydra.run.dir={work / 'run'}",
        ],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    metrics = json.loads((work / "run" / "metrics.json").read_text())
    assert metrics["n"] > 0
    listed = subprocess.run(
        [str(python), "-m", "benchreg", "tasks", "--json"], cwd=work, capture_output=True, text=True
    )
    names = [row["name"] for row in json.loads(listed.stdout) if row["status"] == "ok"]
    assert len([n for n in names if n.startswith("molp2s/")]) == 15
