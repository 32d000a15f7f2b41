"""model=openai from the command line: config group, outputs, and the API key kept secret."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-test-0123456789-do-not-leak"


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchreg", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.slow
def test_the_api_key_never_appears_in_outputs(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    out = tmp_path / "run"
    env = {"BENCHREG_TEST_API_KEY": SECRET, "BENCHREG_CACHE_DIR": str(tmp_path / "cache")}
    args = [
        "task=molp2s/gap",
        "model=openai",
        f"model.base_url={server.base_url}",
        "model.model=fake-model",
        "model.api_key_env=BENCHREG_TEST_API_KEY",
        "run.limit=4",
        "run.bootstrap=0",
        f"hydra.run.dir={out}",
    ]
    result = _cli(args, env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert server.authorization == {f"Bearer {SECRET}"}  # the key was sent...
    assert SECRET not in result.stdout + result.stderr  # ...and shown nowhere
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "metrics.json" for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
        assert SECRET not in str(path)
    metrics = json.loads((out / "metrics.json").read_text())
    stats = metrics["system"]["stats"]
    assert stats["requests"] == 4 and stats["prompt_tokens"] > 0
    assert stats["identity"]["model"] == "fake-model"
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert all(row["metadata"]["usage"]["completion_tokens"] > 0 for row in rows)
    assert all(row["latency_s"] > 0 for row in rows)

    args[-1] = f"hydra.run.dir={tmp_path / 'again'}"
    again = _cli(args, env)  # the cache answers everything
    assert again.returncode == 0, again.stderr[-3000:]
    assert server.chat_requests == 4
    assert SECRET not in again.stdout + again.stderr
    for path in (tmp_path / "again").rglob("*"):
        assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path
    stats = json.loads((tmp_path / "again" / "metrics.json").read_text())["system"]["stats"]
    assert stats["requests"] == 0 and stats["cache_hits"] == 4


@pytest.mark.slow
def test_a_missing_key_variable_is_one_clear_line(tmp_path: Path) -> None:
    env = {"BENCHREG_CACHE_DIR": str(tmp_path / "cache")}
    os.environ.pop("BENCHREG_UNSET_KEY", None)
    result = _cli(
        [
            "task=molp2s/gap",
            "model=openai",
            "model.model=x",
            "model.api_key_env=BENCHREG_UNSET_KEY",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        env,
    )
    assert result.returncode == 2
    assert "environment variable BENCHREG_UNSET_KEY (model.api_key_env) is not set" in (
        result.stderr + result.stdout
    )
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_dead_endpoint_stops_the_run_with_one_line(fake_server, tmp_path: Path) -> None:
    server = fake_server(fail_all=503)
    result = _cli(
        [
            "task=reaction_mc/single_varying",
            "model=openai",
            f"model.base_url={server.base_url}",
            "model.model=m",
            "model.max_retries=0",
            "model.stop_early.min_requests=5",
            "run.cache=off",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        {"BENCHREG_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if "stopped early" in line]
    assert len(lines) == 1, result.stderr[-2000:]
    assert "5 of 5 requests" in lines[0] and "HTTP 503: always failing" in lines[0]
    assert server.chat_requests <= 5 + 8  # those finished + those in flight
