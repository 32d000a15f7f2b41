"""A response cache that is not a sqlite database, or a damaged one: set aside and rebuilt with a
warning (read_write), not used with a warning (read_only); never a sqlite3 traceback."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from loguru import logger

from benchreg.core.errors import BenchregError
from benchreg.systems.cache import FILE_NAME, CacheSettings, ResponseCache
from tests.systems.conftest import chat_cfg, predict_direct, requests_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def warnings() -> list[str]:
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
    yield lines
    logger.remove(sink)


def _garbage(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE_NAME
    path.write_bytes(b"this is not a database\n" * 200)
    return path


def _damaged(folder: Path) -> Path:
    """A real cache whose pages after the header were overwritten."""
    cache = ResponseCache(CacheSettings("read_write", folder / FILE_NAME))
    for i in range(200):
        cache.put(f"k{i}", {"text": "x" * 200, "finish_reason": "stop"})
    cache.close()
    path = folder / FILE_NAME
    for side in ("-wal", "-shm"):
        path.with_name(FILE_NAME + side).unlink(missing_ok=True)
    data = bytearray(path.read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("make", [_garbage, _damaged])
def test_read_write_sets_it_aside_and_rebuilds(
    fake_server, tmp_path: Path, warnings: list[str], make
) -> None:
    bad = make(tmp_path)
    before = bad.read_bytes()
    server = fake_server()
    predictions, report = predict_direct(
        chat_cfg(server.base_url), requests_for(3), cache="read_write", cache_dir=tmp_path
    )
    assert all(p.status.value == "ok" for p in predictions)
    aside = [p for p in tmp_path.iterdir() if ".corrupt-" in p.name and p.suffix != ".tmp"]
    main = [p for p in aside if not p.name.endswith(("-wal", "-shm"))]
    assert len(main) == 1 and main[0].read_bytes() == before  # kept, not deleted
    assert report.stats["cache"]["set_aside"] == str(main[0])
    [line] = [w for w in warnings if "response cache" in w]
    assert "set aside as" in line and "rebuilt empty" in line
    db = sqlite3.connect(tmp_path / FILE_NAME)  # the new one is a good cache with the answers
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3
    db.close()


def test_read_only_does_not_use_it_and_writes_nothing(
    fake_server, tmp_path: Path, warnings: list[str]
) -> None:
    bad = _garbage(tmp_path)
    server = fake_server()
    predictions, _ = predict_direct(
        chat_cfg(server.base_url), requests_for(2), cache="read_only", cache_dir=tmp_path
    )
    assert all(not p.metadata["cached"] for p in predictions)
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILE_NAME]
    assert bad.read_bytes().startswith(b"this is not a database")
    assert any("is unreadable" in w and "not used" in w for w in warnings)


def test_a_folder_where_the_file_should_be_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).mkdir()
    with pytest.raises(BenchregError, match="cannot open the response cache"):
        ResponseCache(CacheSettings("read_write", tmp_path / FILE_NAME))


def test_unreadable_entries_are_asked_again(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    cfg = chat_cfg(server.base_url)
    predict_direct(cfg, requests_for(2), cache="read_write", cache_dir=tmp_path)
    db = sqlite3.connect(tmp_path / FILE_NAME)
    db.execute("UPDATE responses SET response = '{not json'")
    db.commit()
    db.close()
    predictions, _ = predict_direct(cfg, requests_for(2), cache="read_write", cache_dir=tmp_path)
    assert server.chat_requests == 4
    assert all(p.status.value == "ok" and not p.metadata["cached"] for p in predictions)


@pytest.mark.slow
def test_the_cli_says_it_in_one_line(fake_server, tmp_path: Path) -> None:
    _garbage(tmp_path / "cache")
    server = fake_server()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchreg",
            "task=molp2s/gap",
            "model=openai",
            f"model.base_url={server.base_url}",
            "model.model=fake",
            f"run.cache_dir={tmp_path / 'cache'}",
            "run.limit=2",
            "run.bootstrap=0",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "DatabaseError" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "set aside as" in ln]
    assert len(lines) == 1 and lines[0].startswith("WARNING")
