"""Run folders: claimed, resumed, reused or refused; never two runs in one folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.runfolder import open_run_folder, run_fingerprint

INFO = {"task": "molp2s/gap", "view": "correct", "model": "baseline"}


def _finish(folder: Path) -> None:
    (folder / "samples.jsonl").write_text("{}\n")
    (folder / "metrics.json").write_text("{}")


def test_new_folder_is_claimed_with_its_fingerprint(tmp_path: Path) -> None:
    run = open_run_folder(tmp_path / "r", "fp1", INFO)
    assert run.state == "new"
    record = json.loads((tmp_path / "r" / "run.json").read_text())
    assert record["fingerprint"] == "fp1" and record["task"] == "molp2s/gap"
    assert record["attempt"] == 1
    run.release()


def test_same_unfinished_run_is_resumed_and_counts_attempts(tmp_path: Path) -> None:
    open_run_folder(tmp_path, "fp1", INFO).release()
    (tmp_path / "error.json").write_text("{}")
    run = open_run_folder(tmp_path, "fp1", INFO)
    assert run.state == "resumed"
    assert not (tmp_path / "error.json").exists()
    assert json.loads((tmp_path / "run.json").read_text())["attempt"] == 2
    run.release()


def test_finished_run_is_refused_or_reused_or_replaced(tmp_path: Path) -> None:
    open_run_folder(tmp_path, "fp1", INFO).release()
    _finish(tmp_path)
    with pytest.raises(BenchregError, match="already holds a finished run of the same task"):
        open_run_folder(tmp_path, "fp1", INFO)
    reused = open_run_folder(tmp_path, "fp1", INFO, reuse_finished=True)
    assert reused.finished and (tmp_path / "metrics.json").exists()
    reused.release()
    replaced = open_run_folder(tmp_path, "fp1", INFO, overwrite=True)
    assert replaced.state == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "run.json"]
    replaced.release()


def test_another_run_is_refused_naming_it(tmp_path: Path) -> None:
    open_run_folder(tmp_path, "fp1", INFO).release()
    with pytest.raises(BenchregError) as info:
        open_run_folder(tmp_path, "fp2", {**INFO, "task": "molp2s/dipole"})
    assert "already holds an unfinished run of molp2s/gap view=correct (model baseline)" in (
        info.value.message
    )
    assert "run.overwrite=true" in info.value.message


def test_files_benchreg_did_not_write_are_never_removed(tmp_path: Path) -> None:
    (tmp_path / "thesis.tex").write_text("precious")
    with pytest.raises(BenchregError, match=r"files benchreg did not write \(thesis.tex\)"):
        open_run_folder(tmp_path, "fp1", INFO, overwrite=True)
    assert (tmp_path / "thesis.tex").read_text() == "precious"


def test_a_second_process_is_kept_out(tmp_path: Path) -> None:
    first = open_run_folder(tmp_path, "fp1", INFO)
    with pytest.raises(BenchregError, match="another benchreg process is writing"):
        open_run_folder(tmp_path, "fp1", INFO)
    first.release()
    open_run_folder(tmp_path, "fp1", INFO).release()


def test_a_file_in_place_of_the_folder_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(BenchregError, match="the run folder is a file"):
        open_run_folder(tmp_path / "f", "fp1", INFO)


def test_fingerprint_follows_what_decides_results(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("a\n")
    base = run_fingerprint({"name": "t"}, "v", {"name": "m"}, [data], {"seed": 0})
    assert base == run_fingerprint({"name": "t"}, "v", {"name": "m"}, [data], {"seed": 0})
    assert base != run_fingerprint({"name": "t"}, "v", {"name": "m"}, [data], {"seed": 1})
    assert base != run_fingerprint({"name": "t"}, "w", {"name": "m"}, [data], {"seed": 0})
    data.write_text("ab\n")
    assert base != run_fingerprint({"name": "t"}, "v", {"name": "m"}, [data], {"seed": 0})


def _fingerprint(data: Path, seed: int = 0) -> str:
    return run_fingerprint({"name": "t"}, "correct", {"name": "baseline"}, [data], {"seed": seed})


def test_a_touched_data_file_with_the_same_bytes_is_the_same_run(tmp_path: Path) -> None:
    import os

    data = tmp_path / "data.jsonl"
    data.write_text('{"id": 1}\n')
    first = _fingerprint(data)
    os.utime(data, ns=(1, 1))  # touched: another mtime, the same bytes
    assert _fingerprint(data) == first
    data.write_text('{"id": 2}\n')
    assert _fingerprint(data) != first


def test_a_refusal_names_the_input_that_changed(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text('{"id": 1}\n')
    folder = tmp_path / "run"
    open_run_folder(folder, _fingerprint(data), INFO).release()
    _finish(folder)
    data.write_text('{"id": 2}\n')
    with pytest.raises(BenchregError, match="changed since: the data files"):
        open_run_folder(folder, _fingerprint(data), INFO)
    data.write_text('{"id": 1}\n')
    with pytest.raises(BenchregError, match=r"changed since: the run options \(limit"):
        open_run_folder(folder, _fingerprint(data, seed=1), INFO)


def test_a_folder_without_run_json_is_refused_naming_its_files(tmp_path: Path) -> None:
    (tmp_path / "journal.jsonl").write_text("")
    with pytest.raises(BenchregError, match=r"files journal.jsonl; no readable run.json"):
        open_run_folder(tmp_path, "fp", INFO)


def test_temp_files_of_a_killed_write_are_removed_on_resume(tmp_path: Path) -> None:
    open_run_folder(tmp_path, "fp1", INFO).release()
    (tmp_path / ".samples.jsonl.abc123.tmp").write_text("half")
    (tmp_path / ".metrics.json.x.tmp").write_text("half")
    run = open_run_folder(tmp_path, "fp1", INFO)
    assert run.state == "resumed"
    assert not list(tmp_path.glob("*.tmp"))
    run.release()
    (tmp_path / ".notes.txt.tmp").write_text("a user's file")
    with pytest.raises(BenchregError, match="files benchreg did not write"):
        open_run_folder(tmp_path, "fp1", INFO)


def test_an_incomplete_run_is_resumed_not_kept(tmp_path: Path) -> None:
    open_run_folder(tmp_path, "fp1", INFO).release()
    (tmp_path / "samples.jsonl").write_text("{}\n")
    (tmp_path / "metrics.json").write_text(json.dumps({"complete": False}))
    run = open_run_folder(tmp_path, "fp1", INFO, reuse_finished=True)
    assert run.state == "resumed"
    run.release()
    (tmp_path / "metrics.json").write_text(json.dumps({"complete": True}))
    run = open_run_folder(tmp_path, "fp1", INFO, reuse_finished=True)
    assert run.state == "finished"
    run.release()
