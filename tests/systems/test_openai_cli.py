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
    server = fake_server(echo_key=True, models=["fake-model"])  # it repeats the key it gets
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
    assert all("Bearer ***redacted***" in row["raw_output"] for row in rows)  # echoed, scrubbed
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
            "model.model=fake",
            "model.max_retries=0",
            "run.cache=off",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        {"BENCHREG_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if "stopped early" in line]
    assert len(lines) == 1, result.stderr[-2000:]
    assert "4 of 4 requests" in lines[0] and "HTTP 503: always failing" in lines[0]
    assert server.chat_requests <= 4 + 8  # those finished + those in flight


@pytest.mark.slow
@pytest.mark.parametrize("sweep", [False, True])
def test_a_key_typed_where_the_variable_name_belongs_is_refused_unechoed(
    tmp_path: Path, sweep: bool
) -> None:
    typed = "abcdefghij0123456789KLMNOP"  # no sk- prefix: not a key by its form alone
    args = [
        "task=molp2s/gap",
        "model=openai",
        "model.model=x",
        f"model.api_key_env={typed}",
        f"hydra.run.dir={tmp_path / 'run'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]
    result = _cli(["-m", *args] if sweep else args, {"BENCHREG_CACHE_DIR": str(tmp_path / "c")})
    assert result.returncode == 2
    assert "model.api_key_env must name an environment variable" in result.stderr
    assert typed not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    for path in tmp_path.rglob("*"):  # nothing written that holds it (no multirun.yaml, ...)
        assert typed not in str(path)
        assert not path.is_file() or typed.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_a_dead_endpoint_is_one_line_within_seconds_and_writes_nothing(tmp_path: Path) -> None:
    from tests.systems.conftest import closed_port_url

    out = tmp_path / "run"
    result = _cli(
        [
            "task=molp2s/gap",
            "model=openai",
            f"model.base_url={closed_port_url()}",
            "model.model=m",
            f"hydra.run.dir={out}",
        ],
        {"BENCHREG_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "connection refused" in errors[0], result.stderr[-2000:]
    assert not (out / "metrics.json").exists() and not (out / "journal.jsonl").exists()
