"""Crash safety end to end: SIGKILL, SIGINT and SIGTERM at random moments of a model run, each
followed by a resume, end with the results of an uninterrupted run, and the server is asked
again only for what was in flight; a second sweep into a busy or different sweep folder is
refused. Loopback only; every loop is bounded in count and time."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchreg.core.resources import tasks_dir
from benchreg.systems.fake_server import FakeChatServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("httpx") is None and os.environ.get("CI") != "true",
        reason="needs the `models` extra (httpx)",
    ),
]

RECORDS = 512
CONCURRENCY = 4
SAMPLE = tasks_dir().parent / "benchreg" / "families" / "molp2s" / "sample" / "data" / "gap"


def big_release(root: Path, copies: int = RECORDS // 16) -> Path:
    """A MolP2S data root with 512 records: the embedded gap sample, its records repeated under
    new ids (written by this test, in a temp folder)."""
    out = root / "data" / "gap"
    out.mkdir(parents=True)
    tasks = [json.loads(x) for x in (SAMPLE / "correct.jsonl").read_text().splitlines() if x]
    labels = [
        json.loads(x) for x in (SAMPLE / "correct.labels.jsonl").read_text().splitlines() if x
    ]
    with (out / "correct.jsonl").open("w") as t, (out / "correct.labels.jsonl").open("w") as lab:
        for k in range(copies):
            for task in tasks:
                t.write(json.dumps({**task, "record_id": f"{task['record_id']}-{k}"}) + "\n")
            for label in labels:
                lab.write(json.dumps({**label, "record_id": f"{label['record_id']}-{k}"}) + "\n")
    return root


def command(server: FakeChatServer, root: Path, run_dir: Path, cache: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "benchreg",
        "task=molp2s/gap",
        "view=correct",
        "model=openai",
        f"model.base_url={server.base_url}",
        "model.model=fake",
        f"model.concurrency={CONCURRENCY}",
        "model.timeout_s=5",
        f"run.batch_size={2 * CONCURRENCY}",
        "run.bootstrap=0",
        f"roots.molp2s={root}",
        f"run.cache_dir={cache}",
        f"hydra.run.dir={run_dir}",
    ]


def journal_lines(run_dir: Path) -> int:
    path = run_dir / "journal.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def interrupt(cmd: list[str], run_dir: Path, sig: int, rng: random.Random, env: dict) -> int:
    """Start a run, wait until it is answering, then send ``sig`` after a random pause.
    Returns the process's exit code (None never: every wait is bounded); 0 only when the run
    ended before the signal was sent (a signal that lands must stop it)."""
    before = journal_lines(run_dir)
    proc = subprocess.Popen(
        with_sigint("SIG_IGN" if sig == signal.SIGTERM else "SIG_DFL", cmd),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while journal_lines(run_dir) <= before and proc.poll() is None:
        assert time.monotonic() < deadline, "the run never started answering"
        time.sleep(0.02)
    time.sleep(rng.uniform(0.0, 0.6))
    signalled = proc.poll() is None
    if signalled:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    text = err.decode()
    assert not (signalled and proc.returncode == 0), f"the run ignored the signal:\n{text[-3000:]}"
    if sig != signal.SIGKILL and proc.returncode in (130, 143):
        assert "resume" in text, text
    return proc.returncode


def with_sigint(disposition: str, cmd: list[str]) -> list[str]:
    """``cmd`` started with SIGINT at ``disposition`` whatever this process has: a background
    job of a shell (a CI runner's, say) inherits SIGINT ignored, and so does every process it
    starts. The SIGTERM runs keep it ignored on purpose: SIGTERM must stop them all the same."""
    reset = (
        f"import os, signal, sys; signal.signal(signal.SIGINT, signal.{disposition}); "
        "os.execv(sys.executable, sys.argv[1:])"
    )
    return [sys.executable, "-c", reset, *cmd]


def finish(cmd: list[str], env: dict) -> None:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def results(run_dir: Path) -> tuple[dict, dict, dict]:
    metrics = json.loads((run_dir / "metrics.json").read_text())
    rows = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    answers = {row["id"]: (row["status"], row["answer"]) for row in rows}
    values = {name: m["value"] for name, m in metrics["metrics"].items()}
    return values, metrics["statuses"], answers


@pytest.fixture
def env(tmp_path: Path) -> dict:
    return {**os.environ, "BENCHREG_CACHE_DIR": str(tmp_path / "bench_cache")}


@pytest.mark.parametrize(
    ("sig", "times", "codes"),
    [
        (signal.SIGKILL, 10, {-signal.SIGKILL}),
        (signal.SIGINT, 3, {130}),
        (signal.SIGTERM, 3, {143}),
    ],
    ids=["sigkill", "sigint", "sigterm"],
)
def test_interrupted_runs_resume_to_the_uninterrupted_result(
    tmp_path: Path, env: dict, sig: int, times: int, codes: set[int]
) -> None:
    rng = random.Random(sig)
    root = big_release(tmp_path / "release")
    with FakeChatServer(latency_s=0.05, lifetime_s=600).running() as server:
        run_dir = tmp_path / "run"
        cmd = command(server, root, run_dir, tmp_path / "cache")
        seen = set()
        for _ in range(times):
            code = interrupt(cmd, run_dir, sig, rng, env)
            if code == 0:
                break  # the run finished before the signal was sent
            seen.add(code)
        assert seen and seen <= codes, (seen, journal_lines(run_dir))
        assert not (run_dir / "metrics.json").exists()
        finish(cmd, env)
        asked = server.chat_requests
        assert RECORDS <= asked <= RECORDS + times * CONCURRENCY, asked

        clean_dir = tmp_path / "clean"
        finish(command(server, root, clean_dir, tmp_path / "other_cache"), env)
    assert results(run_dir) == results(clean_dir)
    assert json.loads((run_dir / "run.json").read_text())["attempt"] >= 2


def test_a_second_sweep_into_a_busy_or_different_folder_is_refused(
    tmp_path: Path, env: dict
) -> None:
    sweep = tmp_path / "sweep"
    with FakeChatServer(latency_s=0.2, lifetime_s=300).running() as server:
        base = [
            sys.executable,
            "-m",
            "benchreg",
            "-m",
            "task=molp2s/gap",
            "model=openai",
            f"model.base_url={server.base_url}",
            "model.model=fake",
            "run.bootstrap=0",
            f"run.cache_dir={tmp_path / 'cache'}",
            f"hydra.sweep.dir={sweep}",
        ]
        first = subprocess.Popen(
            [*base, "view=correct,shuffled"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while not (sweep / "sweep.json").exists():
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.05)
        second = subprocess.run(
            [*base, "view=correct,shuffled"], env=env, capture_output=True, text=True, timeout=120
        )
        assert second.returncode == 2
        assert "another sweep is running in this folder" in second.stderr
        assert "Traceback" not in second.stderr
        _, err = first.communicate(timeout=240)
        assert first.returncode == 0, err.decode()

        other = subprocess.run(
            [*base, "view=counterfactual"], env=env, capture_output=True, text=True, timeout=120
        )
        assert other.returncode == 2 and "holds another sweep" in other.stderr

        asked = server.chat_requests
        again = subprocess.run(
            [*base, "view=correct,shuffled"], env=env, capture_output=True, text=True, timeout=120
        )
        assert again.returncode == 0, again.stderr
        assert "already finished" in again.stdout
        assert server.chat_requests == asked  # a resumed finished sweep asks nothing
