"""Launchers as config: benchreg (the default), basic, joblib and submitit_local sweeps with one
failing job exit 2 with the failure listed, and leave no process behind; the SLURM example
composes."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchreg.app.sweepfolder import job_states
from tests.app.conftest import compose_app

# Runs the CLI as the child of a Linux child-subreaper, so that any process the sweep leaves
# behind is re-parented here instead of to init; lists those still alive after the CLI exits
# (then kills them).
REAPER = r"""
import ctypes, json, os, signal, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
proc = subprocess.run([sys.executable, "-m", "benchreg", *sys.argv[1:]], capture_output=True,
                      text=True, timeout=600)
import time


def orphans():
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
            cmd = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == os.getpid() and state != "Z":
            found.append((int(entry), cmd or f"(exiting, state {state})"))
    return found


# a worker told to stop may still be tearing down when the CLI returns: give it 5 s to exit
deadline = time.monotonic() + 5
while orphans() and time.monotonic() < deadline:
    time.sleep(0.2)
alive = []
for pid, cmd in orphans():
    alive.append(cmd)
    os.kill(pid, signal.SIGKILL)
print(json.dumps({"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
                  "alive": alive}))
"""

LAUNCHERS = {
    "benchreg": None,  # the default
    "basic": None,  # Hydra's own
    "joblib": "hydra_plugins.hydra_joblib_launcher",
    "submitit_local": "hydra_plugins.hydra_submitit_launcher",
}


def need_plugin(module: str | None) -> None:
    if module is None:
        return
    try:
        __import__(module)
    except ImportError:
        reason = f"{module} not installed (pip install 'benchreg[launchers]')"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI installs it")
        pytest.skip(reason)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses a Linux child subreaper")
@pytest.mark.parametrize("launcher", list(LAUNCHERS))
def test_sweep_with_a_failing_job_exits_2_and_leaves_no_process(launcher: str, tmp_path: Path):
    need_plugin(LAUNCHERS[launcher])
    sweep = tmp_path / "sweep"
    args = ["-m", "task=molp2s/gap", "view=correct,shuffled,sideways", f"hydra.sweep.dir={sweep}"]
    if launcher != "benchreg":
        args.append(f"hydra/launcher={launcher}")
    if launcher == "joblib":
        args.append("hydra.launcher.n_jobs=2")
    out = subprocess.run(
        [sys.executable, "-c", REAPER, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["rc"] == 2, result["stderr"][-3000:]
    with (sweep / "summary.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["status"] for r in rows] == ["ok", "ok", "failed"]
    assert "no view 'sideways'" in rows[2]["error"]
    assert "2 of 3 jobs succeeded." in result["stdout"]
    assert "1 job failed." in result["stdout"]
    assert "Traceback" not in result["stderr"] and "leaked" not in result["stderr"]
    assert (sweep / "analysis_molp2s_views.json").is_file()
    assert (sweep / "report" / "index.html").is_file()
    assert result["alive"] == [], f"processes outlived the {launcher} sweep: {result['alive']}"


def test_launcher_and_report_folders_are_not_jobs(tmp_path: Path) -> None:
    for name in (".submitit/42", "report/figures", "compare", "0_job"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "x.log").write_text("x")
    assert [j.name for j in job_states(tmp_path)] == ["0_job"]


def test_slurm_example_composes() -> None:
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    cfg = compose_app("hydra/launcher=slurm_example", hydra_node=True)
    launcher = cfg.hydra.launcher
    assert launcher._target_.endswith("SlurmLauncher")
    assert (launcher.partition, launcher.timeout_min, launcher.cpus_per_task) == ("cpu", 60, 2)
    assert (launcher.mem_gb, launcher.array_parallelism) == (8, 32)
