"""The response cache writes answers in groups (one transaction for up to FLUSH_EVERY of them):
an answer put is found at once, every answer is on disk when the cache is closed, and a model
run counts every write in its report."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from benchreg.systems.cache import FLUSH_EVERY, CacheSettings, ResponseCache
from tests.systems.conftest import chat_cfg, predict_direct, requests_for


def _on_disk(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def test_answers_are_written_in_groups_and_found_before(tmp_path: Path) -> None:
    cache = ResponseCache(CacheSettings("read_write", tmp_path / "r.sqlite3"))
    answer = {"text": "4", "finish_reason": "stop", "usage": {}, "latency_s": 0.1}
    for i in range(FLUSH_EVERY - 1):
        cache.put(f"k{i}", answer)
    assert cache.pending == FLUSH_EVERY - 1 and _on_disk(cache.settings.path) == 0
    assert cache.get_many(["k0", "k3", "missing"]) == {"k0": answer, "k3": answer}
    cache.put("last of the group", answer)
    assert cache.pending == 0 and _on_disk(cache.settings.path) == FLUSH_EVERY
    cache.put("one more", answer)
    cache.close()
    assert _on_disk(cache.settings.path) == FLUSH_EVERY + 1 and cache.writes == FLUSH_EVERY + 1


def test_a_run_reports_every_write_and_leaves_every_answer_cached(
    fake_server, tmp_path: Path
) -> None:
    server = fake_server()
    cfg = chat_cfg(server.base_url, concurrency=4)
    options = {"cache": "read_write", "cache_dir": tmp_path}
    _, report = predict_direct(cfg, requests_for(FLUSH_EVERY + 7), **options)
    assert report.stats["cache"]["writes"] == FLUSH_EVERY + 7
    assert _on_disk(tmp_path / "responses.sqlite3") == FLUSH_EVERY + 7
    again, report = predict_direct(cfg, requests_for(FLUSH_EVERY + 7), **options)
    assert all(p.metadata["cached"] for p in again)
    assert report.stats["cache_hits"] == FLUSH_EVERY + 7 and report.stats["requests"] == 0
    assert server.chat_requests == FLUSH_EVERY + 7
