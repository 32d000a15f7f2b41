"""A server that takes requests and answers none is said on the terminal within a minute with
the default timeouts (`waiting for the server ...`), not after model.timeout_s times the retries.
Loopback only; every wait is bounded."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchreg.core.types import Status
from benchreg.systems import waiting
from tests.systems.conftest import chat_cfg, predict_direct, requests_for

DEFAULT_LINE_WITHIN_S = 60.0


def test_a_stretch_without_answers_is_said(fake_server, warnings, monkeypatch) -> None:
    monkeypatch.setattr(waiting, "EVERY_S", 0.2)
    server = fake_server(slow_if=lambda messages: True, slow_s=1.0)
    cfg = chat_cfg(server.base_url, timeout_s=5.0, stream=False)
    predictions, _ = predict_direct(cfg, requests_for(2))
    assert [p.status for p in predictions] == [Status.OK] * 2
    said = [line for line in warnings if line.startswith("waiting for the server")]
    assert said and "0 of 2 answered" in said[0] and "model.timeout_s=5" in said[0]


def test_answers_that_keep_coming_are_not_a_wait(fake_server, warnings, monkeypatch) -> None:
    monkeypatch.setattr(waiting, "EVERY_S", 0.5)
    server = fake_server(latency_s=0.05)
    predictions, _ = predict_direct(chat_cfg(server.base_url, concurrency=1), requests_for(12))
    assert all(p.status is Status.OK for p in predictions)
    assert not [line for line in warnings if line.startswith("waiting for the server")]


@pytest.mark.slow
def test_a_hung_server_is_said_within_a_minute_with_the_defaults(
    fake_server, tmp_path: Path
) -> None:
    """The real command, default model options: the server lists its model (the check before
    the run passes) and then never answers a chat request."""
    server = fake_server(slow_if=lambda messages: True, slow_s=300.0, lifetime_s=120.0)
    command = [
        sys.executable,
        "-m",
        "benchreg",
        "task=molp2s/gap",
        "model=openai",
        f"model.base_url={server.base_url}",
        "model.model=fake",
        "run.cache=off",
        f"hydra.run.dir={tmp_path / 'run'}",
    ]
    env = {**os.environ, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        line = _first_line_with(proc, "waiting for the server", DEFAULT_LINE_WITHIN_S)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert line is not None, "no line within a minute"
    assert "0 of 16 answered" in line and "model.timeout_s=120" in line


def _first_line_with(proc: subprocess.Popen[str], text: str, within_s: float) -> str | None:
    """The first stderr line of ``proc`` holding ``text``, waited for at most ``within_s``."""
    assert proc.stderr is not None
    found: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:  # ends when the process is killed
            if text in line:
                found.put(line)
                return

    threading.Thread(target=read, daemon=True).start()
    try:
        return found.get(timeout=within_s)
    except queue.Empty:
        return None
