"""Loading a large JSON list in several processes (core.partload): real worker processes build
their parts' rows; the result is the one-process result, or None when any part has a problem."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from benchreg.core import checkcache, partload
from benchreg.core.errors import BenchregError
from benchreg.core.reader import Record, iter_list_records

ROWS_OF = f"{__name__}:rows_of_items"


def rows_of_items(records: Iterable[Record], tag: str) -> list[Any]:
    """A loader's row builder: a rule (no item may say "bad") and a row per item."""
    rows = []
    for record in records:
        if record.data.get("bad"):
            raise BenchregError("a bad item", where=record.where)
        rows.append((record.data["id"], tag, record.data["payload"]))
    return rows


def _write(path: Path, n: int, bad: int | None = None) -> list[dict[str, Any]]:
    items = [{"id": f"q{i}", "payload": {"x": [i, "é" * (i % 3)], "s": "a:b"}} for i in range(n)]
    if bad is not None:
        items[bad]["bad"] = True
    path.write_text(json.dumps(items, indent=2, ensure_ascii=False), encoding="utf-8")
    return items


@pytest.fixture(params=["forked", "started"])
def start(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Workers forked from the test process, or started as new interpreters; the forked
    workers' pids."""
    monkeypatch.setattr(partload, "FORK", request.param == "forked")
    if request.param == "forked":
        assert partload.forking(), "a thread is running: workers would not be forked"
    forked: list[int] = []
    fork = partload._forked

    def counted(spec: dict[str, Any], log_path: Path) -> partload.ForkedWorker:
        worker = fork(spec, log_path)
        forked.append(worker.pid)
        return worker

    monkeypatch.setattr(partload, "_forked", counted)
    return forked


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_rows_built_in_parts_are_the_one_process_rows(
    tmp_path: Path, monkeypatch, workers: int, start: list[int]
) -> None:
    monkeypatch.setenv(partload.WORKERS_ENV, str(workers))
    path = tmp_path / "items.json"
    _write(path, 300)
    expected = rows_of_items(iter_list_records(path), "t")
    with partload.loaded_in_parts(path, ROWS_OF, ["t"], rows_files=True) as parts:
        assert parts is not None
        assert parts.rows == expected
        assert len(parts.rows_files) == workers + 1  # this process's part first
        assert [r for f in parts.rows_files for r in checkcache.read_rows(f)] == expected
        assert len(parts.worker_peak_rss_mib) == workers
        assert all(peak > 10 for peak in parts.worker_peak_rss_mib)
    assert not any(f.exists() for f in parts.rows_files)  # gone with the block
    assert len(start) == (workers if partload.FORK else 0)


@pytest.mark.parametrize("bad", [0, 150, 299])
def test_a_problem_in_any_part_leaves_the_file_to_one_process(
    tmp_path: Path, monkeypatch, bad: int, start: list[int]
) -> None:
    """The loader's own one-process read then names it (exactly as it always does)."""
    monkeypatch.setenv(partload.WORKERS_ENV, "2")
    path = tmp_path / "items.json"
    _write(path, 300, bad=bad)
    with partload.loaded_in_parts(path, ROWS_OF, ["t"]) as parts:
        assert parts is None
    with pytest.raises(BenchregError, match=rf"items\.json\[#{bad}\]: a bad item"):
        rows_of_items(iter_list_records(path), "t")


def rows_or_die(records: Iterable[Record], tag: str) -> list[Any]:
    if os.environ["LOADING_PROCESS"] != str(os.getpid()):
        os._exit(9)  # a worker killed halfway (out of memory, ...)
    return rows_of_items(records, tag)


def rows_or_raise(records: Iterable[Record], tag: str) -> list[Any]:
    if os.environ["LOADING_PROCESS"] != str(os.getpid()):
        raise RuntimeError("a bug in a worker")  # a forked one never returns into the caller
    return rows_of_items(records, tag)


@pytest.mark.parametrize(("rows_of", "workers"), [("rows_or_die", 1), ("rows_or_raise", 2)])
def test_a_worker_that_dies_or_raises_leaves_the_file_to_one_process(
    tmp_path: Path, monkeypatch, start: list[int], rows_of: str, workers: int
) -> None:
    monkeypatch.setenv(partload.WORKERS_ENV, str(workers))
    monkeypatch.setenv("LOADING_PROCESS", str(os.getpid()))
    path = tmp_path / "items.json"
    _write(path, 100)
    with partload.loaded_in_parts(path, f"{__name__}:{rows_of}", ["t"]) as parts:
        assert parts is None
    assert len(start) == (workers if partload.FORK else 0)


def test_workers_are_started_not_forked_while_another_thread_runs(
    tmp_path: Path, monkeypatch, start: list[int]
) -> None:
    import threading

    monkeypatch.setenv(partload.WORKERS_ENV, "1")
    path = tmp_path / "items.json"
    _write(path, 100)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, args=(30,))
    other.start()
    try:
        with partload.loaded_in_parts(path, ROWS_OF, ["t"]) as parts:
            assert parts is not None and parts.rows == rows_of_items(iter_list_records(path), "t")
    finally:
        stop.set()
        other.join()
    assert start == []


def test_one_process_for_small_files_unsplittable_files_and_workers_0(
    tmp_path: Path, monkeypatch
) -> None:
    path = tmp_path / "items.json"
    _write(path, 50)
    monkeypatch.delenv(partload.WORKERS_ENV, raising=False)
    assert path.stat().st_size < partload.MIN_BYTES
    assert partload.worker_count(path) == 0
    monkeypatch.setenv(partload.WORKERS_ENV, "0")
    with partload.loaded_in_parts(path, ROWS_OF, ["t"]) as parts:
        assert parts is None
    monkeypatch.setenv(partload.WORKERS_ENV, "1")
    path.write_text(json.dumps([{"id": "a", "payload": 1}, {"id": "b", "payload": 2}]))
    with partload.loaded_in_parts(path, ROWS_OF, ["t"]) as parts:
        assert parts is None  # one line: no item boundary to cut at


def test_a_bad_worker_setting_is_one_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(partload.WORKERS_ENV, "two")
    with pytest.raises(BenchregError, match=r"BENCHREG_LOAD_WORKERS='two' is not a whole number"):
        partload.worker_count(tmp_path / "items.json")


def rows_slowly(records: Iterable[Record], pid_file: str) -> list[Any]:
    """A worker that says who it is, then takes its time."""
    if os.environ["LOADING_PROCESS"] != str(os.getpid()):
        Path(pid_file).write_text(str(os.getpid()))
        time.sleep(30)
    return rows_of_items(records, "t")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_loading_process_takes_its_workers_along(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    _write(path, 100)
    pid_file = tmp_path / "worker.pid"
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from benchreg.core import partload\n"
        "os.environ['LOADING_PROCESS'] = str(os.getpid())\n"
        f"with partload.loaded_in_parts(Path({str(path)!r}), '{__name__}:rows_slowly', "
        f"[{str(pid_file)!r}]):\n"
        "    pass\n"
    )
    env = {**os.environ, partload.WORKERS_ENV: "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    loading = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.monotonic() + 30
    while not pid_file.exists():
        assert time.monotonic() < deadline and loading.poll() is None, "no worker started"
        time.sleep(0.05)
    worker = int(pid_file.read_text())
    loading.kill()
    loading.wait(timeout=10)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{worker}").exists() and "Z" not in _state(worker):
        assert time.monotonic() < deadline, "the worker outlived the loading process"
        time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][:1]
    except (OSError, IndexError):
        return "Z"


def test_a_worker_ends_at_once_with_its_code_and_what_it_wrote(tmp_path: Path) -> None:
    """A worker ends without freeing its rows (os._exit): its exit code is kept and what it
    printed or logged, still buffered, is written first."""
    script = (
        "import sys\n"
        "from benchreg.core import partload\n"
        "print('rows written')\n"
        "sys.stderr.write('a note')\n"
        "partload._end(3)\n"
        "print('never')\n"
    )
    with (tmp_path / "log").open("wb") as log:  # a file, as the workers' output goes
        done = subprocess.run([sys.executable, "-c", script], stdout=log, stderr=log, check=False)
    assert done.returncode == 3
    said = (tmp_path / "log").read_text()
    assert "rows written" in said and "a note" in said and "never" not in said


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cuts_cover_the_file_at_line_starts(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lines = [json.dumps({"n": "x" * rng.randrange(300)}) for _ in range(rng.randrange(1, 40))]
    path = tmp_path / "run.jsonl"
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    shares = [rng.uniform(0.5, 2) for _ in range(rng.randint(1, 5))]
    ranges = partload.line_cuts(path, shares)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
    for (_, end), (start, _) in itertools.pairwise(ranges):
        assert end == start and data[start - 1 : start] == b"\n"
