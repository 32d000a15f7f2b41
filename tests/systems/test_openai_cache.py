"""The response cache under model=openai: re-runs ask nothing; read_only and off keep their word."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from benchreg.core.types import Status
from benchreg.systems.cache import FILE_NAME
from tests.systems.conftest import chat_cfg, predict_direct, requests_for, run


def test_a_rerun_against_the_same_model_makes_no_request(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    first = run("molp2s/gap", chat_cfg(server.base_url), cache="read_write", cache_dir=tmp_path)
    asked = server.chat_requests
    assert asked == len(first.samples)
    second = run("molp2s/gap", chat_cfg(server.base_url), cache="read_write", cache_dir=tmp_path)
    assert server.chat_requests == asked  # nothing asked again
    assert [p.raw_text for p in second.predictions] == [p.raw_text for p in first.predictions]
    assert second.metrics["accuracy"].value == first.metrics["accuracy"].value
    assert all(p.metadata["cached"] for p in second.predictions)
    assert not any(p.metadata["cached"] for p in first.predictions)
    stats = second.system_report.stats
    assert stats["requests"] == 0 and stats["cache_hits"] == len(second.samples)


def test_the_key_covers_generation_params_and_model(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    requests = requests_for(3)
    predict_direct(chat_cfg(server.base_url), requests, cache="read_write", cache_dir=tmp_path)
    hot = chat_cfg(server.base_url, temperature=0.7)
    predict_direct(hot, requests, cache="read_write", cache_dir=tmp_path)
    other = chat_cfg(server.base_url, model="other")
    predict_direct(other, requests, cache="read_write", cache_dir=tmp_path)
    assert server.chat_requests == 9
    predict_direct(hot, requests, cache="read_write", cache_dir=tmp_path)
    assert server.chat_requests == 9


def test_errors_are_never_cached(fake_server, tmp_path: Path) -> None:
    server = fake_server(reject_if=lambda messages: "question 1" in messages[-1]["content"])
    cfg = chat_cfg(server.base_url)
    predictions, _ = predict_direct(cfg, requests_for(3), cache="read_write", cache_dir=tmp_path)
    assert [p.status for p in predictions] == [Status.OK, Status.ERROR, Status.OK]
    predict_direct(cfg, requests_for(3), cache="read_write", cache_dir=tmp_path)
    assert server.chat_requests == 4  # only the failed one is asked again
    assert _rows(tmp_path) == 2


def test_read_only_reads_but_never_writes(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    cfg = chat_cfg(server.base_url)
    predict_direct(cfg, requests_for(2), cache="read_only", cache_dir=tmp_path)
    assert not (tmp_path / FILE_NAME).exists()  # nothing created
    predict_direct(cfg, requests_for(2), cache="read_write", cache_dir=tmp_path)
    assert server.chat_requests == 4 and _rows(tmp_path) == 2
    predictions, report = predict_direct(
        cfg, requests_for(4), cache="read_only", cache_dir=tmp_path
    )
    assert [p.metadata["cached"] for p in predictions] == [True, True, False, False]
    assert server.chat_requests == 6
    assert _rows(tmp_path) == 2 and report.stats["cache"]["writes"] == 0


def test_off_never_reads_nor_writes(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    cfg = chat_cfg(server.base_url)
    predict_direct(cfg, requests_for(2), cache="off", cache_dir=tmp_path)
    assert not (tmp_path / FILE_NAME).exists()
    predict_direct(cfg, requests_for(2), cache="read_write", cache_dir=tmp_path)
    predictions, _ = predict_direct(cfg, requests_for(2), cache="off", cache_dir=tmp_path)
    assert server.chat_requests == 6
    assert not any(p.metadata["cached"] for p in predictions)


def test_identical_prompts_in_a_batch_are_asked_once(fake_server) -> None:
    server = fake_server()
    requests = requests_for(3)
    predictions, _ = predict_direct(chat_cfg(server.base_url), requests + requests)
    assert server.chat_requests == 3
    assert [p.raw_text for p in predictions[:3]] == [p.raw_text for p in predictions[3:]]


_WORKER = """
import sys
from tests.systems.conftest import chat_cfg, predict_direct, requests_for
base_url, cache_dir, worker = sys.argv[1], sys.argv[2], int(sys.argv[3])
requests = requests_for(60, prefix=f"w{worker % 2}-")  # pairs of workers share their prompts
predictions, _ = predict_direct(chat_cfg(base_url, concurrency=16), requests,
                                cache="read_write", cache_dir=cache_dir)
assert all(p.raw_text for p in predictions)
"""


@pytest.mark.slow
def test_parallel_processes_share_one_cache(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    root = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, server.base_url, str(tmp_path), str(i)],
            cwd=root,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
    assert "locked" not in err
    assert _rows(tmp_path) == 120
    db = sqlite3.connect(tmp_path / FILE_NAME)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def _rows(folder: Path) -> int:
    db = sqlite3.connect(folder / FILE_NAME)
    try:
        return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    finally:
        db.close()
