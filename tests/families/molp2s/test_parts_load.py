"""A large task file read in two parts at once (this process and a forked copy, core.partload)
gives the samples, the checks and the errors of the one-process read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg import BenchregError, load_task
from benchreg.core import checkcache, partload
from benchreg.core.pipeline import load_dataset
from tests.families.molp2s.conftest import record, write_release

N = 40


def load(root: Path, workers: int, monkeypatch: pytest.MonkeyPatch, view: str = "correct"):
    monkeypatch.setenv(partload.WORKERS_ENV, str(workers))
    return load_dataset(load_task("molp2s/gap"), view, root)


def as_values(dataset) -> list[tuple]:
    return [(s.id, s.input, s.gold, s.meta) for s in dataset.samples]


def records() -> list[dict]:
    out = [record(f"r{i}") for i in range(N)]
    out[3]["note"] = "an extra field"
    out[N - 2]["candidate_completed_smiles"] = ["CCO", "CCN"]
    return out


def labels_of(recs: list[dict]) -> list[dict]:
    return [{"record_id": r["record_id"], "label": i % 2} for i, r in enumerate(recs)]


@pytest.mark.parametrize("view", ["correct", "structure_only"])
def test_two_processes_give_the_samples_of_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, view: str
) -> None:
    lines = [json.dumps(r) for r in records()]
    lines.insert(N // 2, "")  # a blank line: the line numbers stay the file's
    root = write_release(
        tmp_path / "release", records(), labels_of(records()), raw_task_lines=lines
    )
    one = load(root, 0, monkeypatch, view)
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache2"))
    two = load(root, 1, monkeypatch, view)
    assert one.info.get("read_by") is None
    assert two.info["read_by"] == {"processes": 2}
    assert two.info["smiles_checks"] == one.info["smiles_checks"] == "checked"
    assert as_values(two) == as_values(one)
    assert [s.meta["line"] for s in two.samples][-1] == N + 1


def test_the_cache_entry_of_two_parts_gives_the_samples_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkcache, "LOADED_MIN_BYTES", 0)
    root = write_release(tmp_path / "release", records(), labels_of(records()))
    two = load(root, 1, monkeypatch)
    assert two.info["read_by"] == {"processes": 2}
    again = load(root, 1, monkeypatch)
    assert again.info["smiles_checks"] == "cached" and "read_by" not in again.info
    assert as_values(again) == as_values(two)


def _last_broken(kind: str) -> tuple[list[dict], list[dict] | None, list[str] | None]:
    """Records, labels and raw lines with one problem in the file's second half."""
    recs = records()
    labels = labels_of(recs)
    lines = None
    if kind == "id in both parts":
        recs[-1]["record_id"] = "r0"  # (the labels still count one per line of the file)
    elif kind == "bad candidate":
        recs[-1]["candidate_completed_smiles"] = ["CCO", "C1CC(("]
    elif kind == "label out of range":
        labels[-1]["label"] = 7
    elif kind == "label of no record":
        labels.append({"record_id": "ghost", "label": 0})
    elif kind == "record without label":
        labels = labels[:-1]
    elif kind == "label not an int":
        labels[-1]["label"] = "1"
    elif kind == "malformed line":
        lines = [json.dumps(r) for r in recs[:-1]] + ["{not json"]
    elif kind == "missing field":
        del recs[-1]["candidate_completed_smiles"]
    return recs, labels, lines


@pytest.mark.parametrize(
    "kind",
    [
        "id in both parts",
        "bad candidate",
        "label out of range",
        "label of no record",
        "record without label",
        "label not an int",
        "malformed line",
        "missing field",
    ],
)
def test_a_problem_in_the_copys_part_is_reported_as_one_process_reports_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    recs, labels, lines = _last_broken(kind)
    root = write_release(tmp_path / "release", recs, labels, raw_task_lines=lines)
    with pytest.raises(BenchregError) as one:
        load(root, 0, monkeypatch)
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache2"))
    with pytest.raises(BenchregError) as two:
        load(root, 1, monkeypatch)
    assert str(two.value) == str(one.value)
