"""The files of a sweep as `analyze`, `report` and `compare` read them (core.analysis): what a
sweep folder is, the shape checks of its files, incomplete runs, and the short identity beside a
display name that two models share (issue 19, items 9, 6 and 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchreg.core.analysis import (
    DamagedFileError,
    check_metrics,
    check_sweep,
    check_sweep_folder,
    identity_labels,
    is_sweep_folder,
    model_tag,
    read_jobs,
)
from benchreg.core.errors import BenchregError

SHA_A = "0123456789ab" + "c" * 52
SHA_B = "fedcba987654" + "d" * 52


def job(folder: Path, **extra: object) -> Path:
    folder.mkdir(parents=True)
    metrics = {
        "task": "molp2s/gap",
        "family": "molp2s",
        "view": "correct",
        "model": "m",
        "model_id": "m-id",
        "primary": "accuracy",
        "n": 2,
        "metrics": {"accuracy": {"value": 0.5, "n": 2, "denominator": 2, "ci95": [0.1, 0.9]}},
        **extra,
    }
    (folder / "metrics.json").write_text(json.dumps(metrics, indent=2))
    (folder / "samples.jsonl").write_text('{"id": "a", "score": 1.0}\n{"id": "b", "score": 0.0}\n')
    return folder


def test_model_tag_and_labels() -> None:
    assert model_tag(f"predictions:sha256={SHA_A}") == "01234567"
    assert len(model_tag("gpt@http://a/v1#1")) == 8
    assert model_tag("gpt@http://a/v1#1") != model_tag("gpt@http://b/v1#1")
    labels = identity_labels(
        [
            ("results.json", f"predictions:sha256={SHA_A}"),
            ("results.json", f"predictions:sha256={SHA_B}"),
            ("baseline", "baseline"),
            ("results.json", f"predictions:sha256={SHA_A}"),
        ]
    )
    assert labels == {
        ("results.json", f"predictions:sha256={SHA_A}"): "results.json [01234567]",
        ("results.json", f"predictions:sha256={SHA_B}"): "results.json [fedcba98]",
        ("baseline", "baseline"): "baseline",
    }


def test_colliding_tags_fall_back_to_longer_forms() -> None:
    one, two = f"a:sha256={SHA_A}", f"b:sha256={SHA_A}"  # the same file, two identities
    labels = identity_labels([("x", one), ("x", two)])
    assert len(set(labels.values())) == 2


def test_what_a_sweep_folder_is(tmp_path: Path) -> None:
    failed = tmp_path / "failed_only" / "0_job"
    failed.mkdir(parents=True)
    (failed / "error.json").write_text('{"error": "boom"}')
    assert is_sweep_folder(tmp_path / "failed_only")
    job(tmp_path / "plain" / "0_job")
    assert is_sweep_folder(tmp_path / "plain")
    assert not is_sweep_folder(tmp_path / "plain" / "0_job")  # a run folder
    assert not is_sweep_folder(tmp_path)  # a folder of sweeps
    with pytest.raises(BenchregError, match="a folder of 2 sweep folder"):
        check_sweep_folder(tmp_path)
    hidden = tmp_path / "hidden"
    job(hidden / ".submitit")
    with pytest.raises(BenchregError, match=r"no sweep\.json and no job folder"):
        check_sweep_folder(hidden)


def test_incomplete_runs_are_left_out_of_the_analyses(tmp_path: Path) -> None:
    job(tmp_path / "0_done")
    job(tmp_path / "1_half", complete=False)
    job(tmp_path / "2_old")  # no `complete` key: an older run folder, complete
    assert [j.dir.name for j in read_jobs(tmp_path)] == ["0_done", "2_old"]
    every = read_jobs(tmp_path, incomplete=True)
    assert [j.complete for j in every] == [True, False, True]
    assert [j.dir.name for j in check_sweep(tmp_path)] == ["0_done", "1_half", "2_old"]


def test_an_analysis_needs_less_than_the_report(tmp_path: Path) -> None:
    """A minimal metrics.json (task, model, samples) is enough for an analysis; `report` and
    `compare` need the primary metric too."""
    folder = tmp_path / "0"
    folder.mkdir()
    (folder / "metrics.json").write_text('{"task": "t/x", "model": "m"}')
    (folder / "samples.jsonl").write_text('{"id": 1}\n')
    assert [j.task for j in read_jobs(tmp_path)] == ["t/x"]
    with pytest.raises(DamagedFileError, match="`primary` is missing"):
        check_sweep(tmp_path)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"metrics": {"accuracy": {"value": True}}}, "`metrics.accuracy.value` is true/false"),
        ({"metrics": {"accuracy": {"value": 1, "n": 1.5}}}, "`metrics.accuracy.n` is a number"),
        ({"metrics": {}}, "expected at least one metric"),
        ({"model": ""}, "`model` is a string, expected a non-empty string"),
        ({"sha256": {"data": []}}, "`sha256.data` is a list"),
        ({"strict": {"accuracy": []}}, "`strict.accuracy` is a list"),
    ],
)
def test_metrics_shapes(change: dict, expected: str, tmp_path: Path) -> None:
    record = {
        "task": "t",
        "model": "m",
        "primary": "accuracy",
        "metrics": {"accuracy": {"value": 0.5}},
        **change,
    }
    text = json.dumps(record, indent=2)
    with pytest.raises(DamagedFileError, match=re.escape(expected)):
        check_metrics(record, tmp_path / "metrics.json", text)


def test_a_samples_file_without_a_recorded_sha_is_read_line_by_line(tmp_path: Path) -> None:
    folder = job(tmp_path / "0")
    (folder / "samples.jsonl").write_text('{"id": "a"}\n{"score": 1}\n')
    with pytest.raises(DamagedFileError, match=r"samples.jsonl:2: `id` is missing"):
        check_sweep(tmp_path)


def _samples_job(folder: Path, text: str) -> object:
    """A JobRecord whose metrics.json records the sha256 of ``text`` as its samples.jsonl."""
    import hashlib

    from benchreg.core.analysis import JobRecord

    folder.mkdir(parents=True)
    (folder / "samples.jsonl").write_text(text, "utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return JobRecord(folder, {"sha256": {"samples.jsonl": digest}, "n": 2}, {})


def test_samples_as_written_are_read_as_json_reads_them(tmp_path: Path) -> None:
    text = '{"id": "a", "score": 1.0, "answer": "漢字"}\n{"id": 2, "big": 123456789012345678901}\n'
    expected = [json.loads(line) for line in text.splitlines()]
    assert _samples_job(tmp_path / "long", text).samples == expected  # long int: json's path
    plain = '{"id": "a", "score": 1.0, "answer": ["漢字", {"k": null}]}\n{"id": "b"}\n'
    assert _samples_job(tmp_path / "plain", plain).samples == [
        json.loads(line) for line in plain.splitlines()
    ]


def test_samples_changed_after_the_run_are_checked_line_by_line(tmp_path: Path) -> None:
    record = _samples_job(tmp_path / "job", '{"id": "a"}\n{"id": "b"}\n')
    (tmp_path / "job" / "samples.jsonl").write_text('{"id": "a"}\n{"nope": 1}\n', "utf-8")
    with pytest.raises(DamagedFileError):
        record.samples  # noqa: B018


def test_inside_samples_shared_each_file_is_decoded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchreg.core import analysis
    from benchreg.core.analysis import JobRecord, samples_shared

    decoded: list[Path] = []
    decode = analysis._decoded_rows
    monkeypatch.setattr(
        analysis, "_decoded_rows", lambda path, sha: decoded.append(path) or decode(path, sha)
    )
    text = '{"id": "a", "score": 1.0}\n{"id": "b", "score": 0.0}\n'
    first = _samples_job(tmp_path / "job", text)
    assert isinstance(first, JobRecord)
    again = JobRecord(first.dir, first.metrics, {})
    with samples_shared():
        rows, rows_again = first.samples, again.samples
        assert rows == rows_again == [json.loads(line) for line in text.splitlines()]
        assert rows is not rows_again  # each reader its own list
        assert len(decoded) == 1
    assert JobRecord(first.dir, first.metrics, {}).samples == rows
    assert len(decoded) == 2  # outside the block, nothing is kept


def test_inside_samples_shared_a_changed_file_is_read_again(tmp_path: Path) -> None:
    from benchreg.core.analysis import JobRecord, samples_shared

    record = _samples_job(tmp_path / "job", '{"id": "a"}\n{"id": "b"}\n')
    assert isinstance(record, JobRecord)
    with samples_shared():
        assert [row["id"] for row in record.samples] == ["a", "b"]
        changed = '{"id": "a"}\n{"nope": 12}\n'  # another size (mtimes can be coarse)
        (tmp_path / "job" / "samples.jsonl").write_text(changed, "utf-8")
        with pytest.raises(DamagedFileError):
            JobRecord(record.dir, record.metrics, {}).samples  # noqa: B018
