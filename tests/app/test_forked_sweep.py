"""Sweeps run by forked copies of the sweep process (hydra.sweeper.workers): the same results as
one process, every job reported in order, a job lost with its process run again, an interrupt
that stops the copies, and the choice of how many processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hydra.core.utils import JobReturn, JobStatus

from hydra_plugins.benchreg_sweeper import forked
from hydra_plugins.benchreg_sweeper.forked import job_model, run_forked, sweep_processes

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


@pytest.fixture(autouse=True)
def _fork_at_any_size(monkeypatch) -> None:
    """The test process itself may hold more than the sweep's size gate."""
    monkeypatch.setattr(forked, "FORK_MAX_MIB", 1 << 20)


def _returning_pid(idx: int, overrides: list[str]) -> JobReturn:
    time.sleep(0.05)  # long enough for every process to take jobs
    ret = JobReturn()
    ret.return_value = {"job": idx, "pid": os.getpid(), "overrides": list(overrides)}
    ret.status = JobStatus.COMPLETED
    return ret


def _jobs(count: int) -> list[tuple[int, list[str]]]:
    return [(k, [f"task=t{k}"]) for k in range(count)]


def _no_child_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_every_job_is_returned_in_order_from_two_processes() -> None:
    returns = run_forked(_returning_pid, _jobs(12), processes=2)
    values = [r.return_value for r in returns]
    assert [v["job"] for v in values] == list(range(12))
    assert [v["overrides"] for v in values] == [[f"task=t{k}"] for k in range(12)]
    pids = {v["pid"] for v in values}
    assert os.getpid() in pids and len(pids) == 2
    assert _no_child_left()


def test_a_job_lost_with_its_process_is_run_again_here(tmp_path: Path) -> None:
    parent = os.getpid()
    lost = tmp_path / "lost"

    def run(idx: int, overrides: list[str]) -> JobReturn:
        if os.getpid() != parent:
            lost.write_text(str(idx))
            os._exit(9)  # the copy dies in its first job
        return _returning_pid(idx, overrides)

    returns = run_forked(run, _jobs(20), processes=2)
    values = [r.return_value for r in returns]
    assert [v["job"] for v in values] == list(range(20))
    assert {v["pid"] for v in values} == {parent}
    assert lost.is_file(), "the copy took no job"
    assert _no_child_left()


def test_an_interrupt_stops_the_copies_and_is_raised() -> None:
    parent = os.getpid()

    def run(idx: int, overrides: list[str]) -> JobReturn:
        if os.getpid() == parent and idx >= 2:
            raise KeyboardInterrupt
        time.sleep(0.2 if os.getpid() != parent else 0.01)
        return _returning_pid(idx, overrides)

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_forked(run, _jobs(40), processes=2)
    assert time.monotonic() - started < forked.STOP_WAIT_S  # stopped, not run to the end
    assert _no_child_left()


def test_lines_printed_by_two_processes_into_a_pipe_stay_whole(tmp_path: Path) -> None:
    """Without PYTHONUNBUFFERED, standard output into a pipe is block-buffered: flushed in 8 KiB
    pieces that end mid-line, two processes' pieces would interleave inside lines."""
    script = textwrap.dedent(
        """
        import os, sys, time
        from hydra.core.utils import JobReturn, JobStatus
        from hydra_plugins.benchreg_sweeper import forked

        forked.FORK_MAX_MIB = 1 << 20

        parent, child_started = os.getpid(), sys.argv[1]

        def run(idx, overrides):
            if os.getpid() != parent:
                open(child_started, "w").close()
            else:  # until the copy has taken a job too (bounded)
                for _ in range(400):
                    if os.path.exists(child_started):
                        break
                    time.sleep(0.025)
            for line in range(40):
                print(f"job {idx:03d} line {line:02d} " + "x" * 150 + " end")
            ret = JobReturn()
            ret.return_value, ret.status = os.getpid(), JobStatus.COMPLETED
            return ret

        print("before the fork, buffered")
        returns = forked.run_forked(run, [(k, []) for k in range(30)], processes=2)
        print("pids", len({r.return_value for r in returns}))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "child-started")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "before the fork, buffered" and lines[-1] == "pids 2"
    body = lines[1:-1]
    assert len(body) == 30 * 40
    assert all(
        line.startswith("job ") and line.endswith(" end") and len(line) == 170 for line in body
    )
    assert sorted(body) == sorted(
        f"job {k:03d} line {n:02d} " + "x" * 150 + " end" for k in range(30) for n in range(40)
    )


@pytest.mark.skipif(sys.platform != "linux", reason="the size gate reads /proc/self/statm")
def test_one_process_or_a_large_sweep_process_runs_the_jobs_itself(monkeypatch) -> None:
    values = [r.return_value for r in run_forked(_returning_pid, _jobs(4), processes=1)]
    assert {v["pid"] for v in values} == {os.getpid()}
    monkeypatch.setattr(forked, "FORK_MAX_MIB", 0)
    values = [r.return_value for r in run_forked(_returning_pid, _jobs(4), processes=2)]
    assert {v["pid"] for v in values} == {os.getpid()}


def test_auto_forks_only_for_models_that_answer_from_the_inputs(monkeypatch) -> None:
    monkeypatch.setattr(forked, "usable_cpus", lambda: 2)
    offline = [["task=a", "model=predictions"], ["task=b", "model=baseline"]]
    assert sweep_processes("auto", offline, "baseline") == 2
    assert sweep_processes("auto", [["task=a"], ["task=b"]], "baseline") == 2
    assert sweep_processes("auto", [["task=a"], ["task=b"]], "openai") == 1
    with_server = [["task=a", "model=baseline"], ["task=a", "model=llama_cpp"]]
    assert sweep_processes("auto", with_server, "baseline") == 1
    assert sweep_processes("auto", [["task=a", "model.name=openai"]] * 2, "baseline") == 1
    assert sweep_processes("auto", [["task=a"]], "baseline") == 1  # one job
    assert sweep_processes(3, with_server, "baseline") == 2  # as asked, at most one per job
    assert sweep_processes(1, offline, "baseline") == 1
    monkeypatch.setattr(forked, "usable_cpus", lambda: 64)
    assert sweep_processes("auto", offline * 5, "baseline") == forked.AUTO_MAX
    assert job_model(["model=random", "+model.name=predictions"], None) == "predictions"


def _metrics(sweep: Path) -> dict[str, dict]:
    out = {}
    for path in sorted(sweep.glob("*/metrics.json")):
        data = json.loads(path.read_text("utf-8"))
        out[path.parent.name] = {
            "n": data["n"],
            "complete": data["complete"],
            "metrics": {k: (v["value"], v["ci95"]) for k, v in data["metrics"].items()},
        }
    return out


@pytest.mark.slow
def test_a_forked_sweep_writes_what_one_process_writes(cli, tmp_path: Path) -> None:
    args = ["-m", "task=molp2s/gap,molp2s/dipole", "view=correct,shuffled", "model=baseline"]
    one = cli(*args, f"hydra.sweep.dir={tmp_path / 'one'}", "hydra.sweeper.workers=1")
    two = cli(*args, f"hydra.sweep.dir={tmp_path / 'two'}", "hydra.sweeper.workers=2")
    assert one.returncode == 0 and two.returncode == 0, two.stderr[-2000:]
    assert "run in 2 processes" in two.stderr and "processes" not in one.stderr
    assert "Traceback" not in two.stderr
    expected = _metrics(tmp_path / "one")
    assert len(expected) == 4 and _metrics(tmp_path / "two") == expected
    for name in ("summary.csv", "analysis_molp2s_views.json"):
        assert (tmp_path / "two" / name).is_file()
    rows = (tmp_path / "two" / "summary.csv").read_text("utf-8").splitlines()
    assert rows == (tmp_path / "one" / "summary.csv").read_text("utf-8").splitlines()


@pytest.mark.parametrize("setting", ["0", "-1", "many", "true"])
def test_a_bad_workers_setting_is_one_clear_error(cli, tmp_path: Path, setting: str) -> None:
    out = cli(
        "-m",
        "task=molp2s/gap",
        f"hydra.sweep.dir={tmp_path / 's'}",
        f"hydra.sweeper.workers={setting}",
    )
    assert out.returncode == 2
    assert "hydra.sweeper.workers" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "s").exists()
