"""A first retrieval run on large set files: the entries are checked by a forked copy while the
run process reads the TREC run ahead (core.idle); both give what the one-process path gives."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from benchreg.core import checkcache, idle
from benchreg.core.errors import BenchregError
from benchreg.core.pipeline import load_dataset
from benchreg.families.retrieval import loader, predictions
from benchreg.families.retrieval.predictions import read_run

from .test_predictions import ATOMS, SAMPLES, TASK, lines


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(checkcache, "LOADED_MIN_BYTES", 0)
    monkeypatch.setattr(loader, "COPY_MIN_BYTES", 0)
    return tmp_path / "cache"


def _load(root: Path):  # type: ignore[no-untyped-def]
    from benchreg import load_task

    return load_dataset(load_task("retrieval/pdf"), "dev", root)


def test_entries_checked_by_a_copy_equal_those_checked_here(
    root: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[int] = []
    with idle.offered(lambda: ran.append(os.getpid())):
        by_copy = _load(root)
    assert ran == [os.getpid()]  # the offered work ran here, while the copy checked
    assert by_copy.info["entries"] == "read and checked (by a forked copy of this run)"
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(cache.parent / "other"))
    here = _load(root)  # nothing offered: this process reads and checks
    assert here.info["entries"] == "read and checked"
    assert by_copy.samples == here.samples and by_copy.warnings == here.warnings
    assert {k: v for k, v in by_copy.info.items() if k not in ("entries", "manifest_obj")} == {
        k: v for k, v in here.info.items() if k not in ("entries", "manifest_obj")
    }


def test_a_problem_the_copy_meets_is_reported_by_this_process(
    root: Path, cache: Path, edit_entry
) -> None:
    path = root / "sets" / "pdf.jsonl"
    path.write_text(path.read_text("utf-8") + "{oops\n", "utf-8")
    errors = []
    for offered in (lambda: None, None):
        with idle.offered(offered), pytest.raises(BenchregError) as info:
            _load(root)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "pdf.jsonl:" in errors[0]
    assert not idle.has_offered()


def _trec(tmp_path: Path) -> Path:
    run = tmp_path / "run.trec"
    run.write_text(
        "q1 Q0 a1 1 3.0 mine\nq1 Q0 a2 2 2.0 mine\nbroken line\nq2 Q0 a3 1 1.0 mine\n", "utf-8"
    )
    lines(tmp_path / "run.trec.atoms.jsonl", ATOMS)
    return run


def _said(found) -> list[object]:  # type: ignore[no-untyped-def]
    return [
        sorted((k, p.status, str(p.answer)) for k, p in found.by_id.items()),
        found.notes,
        found.unknown_ids,
    ]


def test_a_trec_run_read_ahead_gives_what_a_read_gives(tmp_path: Path) -> None:
    run = _trec(tmp_path)
    expected = _said(read_run(run, SAMPLES, TASK))
    read_run.prefetch(run)
    assert predictions._PREFETCHED
    assert _said(read_run(run, SAMPLES, TASK)) == expected  # the malformed line named too
    assert not predictions._PREFETCHED  # taken once


def test_a_run_changed_after_its_read_ahead_is_read_again(tmp_path: Path) -> None:
    run = _trec(tmp_path)
    read_run.prefetch(run)
    time.sleep(0.01)
    run.write_text("q3 Q0 a1 1 3.0 mine\n", "utf-8")
    found = read_run(run, SAMPLES, TASK)
    assert list(found.by_id) == ["q3"] and not any("malformed" in n for n in found.notes)
    assert not predictions._PREFETCHED  # the stale read dropped
