"""A run folder after a failed attempt: a claim that kept no answer never blocks the corrected
command, a run with answers still resumes, a damaged metrics.json is said as such, and no empty
`.lock` stays behind."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.journal import holds_answers
from benchreg.core.runfolder import (
    LOCK_FILE,
    metrics_damage,
    open_run_folder,
    release_lock,
    try_lock,
)

INFO = {"task": "molp2s/gap", "view": "correct", "model": "openai"}
FAILED = {"id": "a", "status": "error", "detail": "HTTP 503"}
ANSWERED = {"id": "b", "status": "ok", "raw_text": "1"}


def _failed_attempt(folder: Path, *journal: dict) -> None:
    """What a sweep job that failed leaves: its claim, error.json and its journal."""
    open_run_folder(folder, "fp-old", INFO).release()
    (folder / "error.json").write_text(json.dumps({"error": "stopped early"}))
    (folder / "journal.jsonl").write_text("".join(json.dumps(row) + "\n" for row in journal))


def test_a_failed_attempt_without_answers_is_claimed_by_the_corrected_run(
    tmp_path: Path,
) -> None:
    _failed_attempt(tmp_path, FAILED, FAILED)
    run = open_run_folder(tmp_path, "fp-new", INFO)
    assert run.state == "new"
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [LOCK_FILE, "run.json"]  # nothing of the failed attempt is left
    assert json.loads((tmp_path / "run.json").read_text())["fingerprint"] == "fp-new"
    run.release()


def test_a_failed_attempt_with_an_answer_is_kept_for_its_own_command(tmp_path: Path) -> None:
    _failed_attempt(tmp_path, FAILED, ANSWERED)
    with pytest.raises(BenchregError, match="already holds an unfinished run"):
        open_run_folder(tmp_path, "fp-new", INFO)
    assert holds_answers(tmp_path)
    resumed = open_run_folder(tmp_path, "fp-old", INFO)
    assert resumed.state == "resumed" and not (tmp_path / "error.json").exists()
    resumed.release()


def test_a_killed_attempt_is_still_refused_to_another_run(tmp_path: Path) -> None:
    open_run_folder(tmp_path, "fp-old", INFO).release()  # no error.json: it may come back
    with pytest.raises(BenchregError, match="already holds an unfinished run"):
        open_run_folder(tmp_path, "fp-new", INFO)


def test_abandon_gives_back_only_a_folder_without_answers(tmp_path: Path) -> None:
    empty, kept = tmp_path / "empty", tmp_path / "kept"
    run = open_run_folder(empty, "fp", INFO)
    (empty / "journal.jsonl").write_text(json.dumps(FAILED) + "\n")
    run.abandon()
    assert not empty.exists()
    run = open_run_folder(kept, "fp", INFO)
    (kept / "journal.jsonl").write_text(json.dumps(ANSWERED) + "\n")
    run.abandon()
    run.release()
    assert sorted(p.name for p in kept.iterdir()) == ["journal.jsonl", "run.json"]
    assert open_run_folder(kept, "fp", INFO).state == "resumed"


def test_a_torn_journal_line_is_no_answer(tmp_path: Path) -> None:
    (tmp_path / "journal.jsonl").write_text(json.dumps(FAILED) + '\n{"id": "b", "sta')
    assert not holds_answers(tmp_path)


def test_the_lock_file_goes_with_the_lock_and_still_keeps_a_second_process_out(
    tmp_path: Path,
) -> None:
    run = open_run_folder(tmp_path, "fp", INFO)
    assert (tmp_path / LOCK_FILE).exists()
    with pytest.raises(BenchregError, match="another benchreg process is writing"):
        open_run_folder(tmp_path, "fp", INFO)
    run.release()
    assert not (tmp_path / LOCK_FILE).exists()


def test_a_lock_on_a_file_its_holder_removed_is_not_taken(tmp_path: Path, monkeypatch) -> None:
    """A process that opens the lock file just before its holder removes it and lets go must
    not hold the folder on the removed file (a third process would lock a new one)."""
    lock_file = tmp_path / LOCK_FILE
    holder = try_lock(lock_file, "busy", fix="wait")
    real_flock = fcntl.flock
    let_go: list[bool] = []

    def holder_lets_go_first(handle: object, operation: int) -> None:
        if not let_go:  # between the late process's open and its flock
            let_go.append(True)
            release_lock(holder)
        real_flock(handle, operation)

    monkeypatch.setattr(fcntl, "flock", holder_lets_go_first)
    late = try_lock(lock_file, "busy", fix="wait")
    assert let_go and lock_file.exists()  # it locked the file that is there, not the removed one
    assert os.fstat(late.fileno()).st_ino == os.stat(lock_file).st_ino
    release_lock(late)
    assert not lock_file.exists()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"task": "t", "metr', "metrics.json:1: malformed JSON"),
        ("", "metrics.json:1: malformed JSON"),
        ("[1, 2]", "holds a JSON list, not an object"),
    ],
)
def test_a_damaged_metrics_json_is_said_and_the_same_run_resumes(
    tmp_path: Path, text: str, said: str
) -> None:
    open_run_folder(tmp_path, "fp", INFO).release()
    (tmp_path / "samples.jsonl").write_text("{}\n")
    (tmp_path / "metrics.json").write_text(text)
    damage = metrics_damage(tmp_path)
    assert damage is not None and said in damage and str(tmp_path) in damage
    with pytest.raises(BenchregError, match=r"metrics\.json is damaged"):
        open_run_folder(tmp_path, "fp-other", INFO)
    run = open_run_folder(tmp_path, "fp", INFO, reuse_finished=True)
    assert run.state == "resumed"  # written again, never reused as a result
    run.release()


def test_a_sound_or_absent_metrics_json_is_no_damage(tmp_path: Path) -> None:
    assert metrics_damage(tmp_path) is None
    (tmp_path / "metrics.json").write_text(json.dumps({"complete": True}))
    assert metrics_damage(tmp_path) is None


def test_a_folder_in_place_of_metrics_json_is_one_clear_error(tmp_path: Path) -> None:
    open_run_folder(tmp_path, "fp", INFO).release()
    (tmp_path / "metrics.json").mkdir()
    with pytest.raises(BenchregError, match="a folder where a file is expected") as info:
        open_run_folder(tmp_path, "fp", INFO, reuse_finished=True)
    assert info.value.message.startswith(f"damaged: {tmp_path / 'metrics.json'}: ")
    assert "remove that folder" in info.value.message
    assert not (tmp_path / LOCK_FILE).exists()
