"""core.outputs: metrics.json, samples.jsonl and provenance.json of a run, written atomically and
metrics.json last; the records they hold."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from benchreg.core import outputs
from benchreg.core.io import sha256_file
from benchreg.core.options import RunOptions
from benchreg.core.provenance import REDACTED
from benchreg.core.result import RunResult
from benchreg.core.run import run_task
from benchreg.core.runfolder import ERROR_FILE, METRICS_FILE
from benchreg.core.system import SystemReport
from benchreg.core.task import load_task
from benchreg.core.types import Prediction, Status
from benchreg.core.validation import Finding

CONFIG = {"model": {"name": "baseline", "api_key": "sk-not-a-real-key"}, "run": {"n_boot": 20}}


@pytest.fixture(scope="module")
def result() -> RunResult:
    return run_task(load_task("molp2s/gap"), options=RunOptions(progress=False, n_boot=20))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


# --- write_run ----------------------------------------------------------------------------------


def test_write_run_writes_the_three_files(result: RunResult, tmp_path: Path) -> None:
    record = outputs.write_run(tmp_path, result, CONFIG)
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {METRICS_FILE, outputs.SAMPLES_FILE, outputs.PROVENANCE_FILE}
    assert json.loads((tmp_path / METRICS_FILE).read_text("utf-8")) == json.loads(
        json.dumps(record)
    )
    rows = read_jsonl(tmp_path / outputs.SAMPLES_FILE)
    assert [r["id"] for r in rows] == [s.id for s in result.samples]
    assert [r["status"] for r in rows] == [p.status.value for p in result.predictions]
    assert sum(r["score"] for r in rows) == pytest.approx(
        result.metrics["accuracy"].value * len(rows)
    )
    assert record["sha256"]["samples.jsonl"] == sha256_file(tmp_path / outputs.SAMPLES_FILE)


def test_metrics_json_is_written_last(
    result: RunResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    write_json, write_jsonl = outputs.atomic_write_json, outputs.atomic_write_jsonl

    def record_json(path: Path, obj: Any, **kwargs: Any) -> None:
        order.append(path.name)
        write_json(path, obj, **kwargs)

    def record_jsonl(path: Path, rows: list[Any], **kwargs: Any) -> str:
        order.append(path.name)
        return write_jsonl(path, rows, **kwargs)

    monkeypatch.setattr(outputs, "atomic_write_json", record_json)
    monkeypatch.setattr(outputs, "atomic_write_jsonl", record_jsonl)
    outputs.write_run(tmp_path, result, {})
    assert order[-1] == METRICS_FILE
    assert sorted(order) == sorted([METRICS_FILE, outputs.SAMPLES_FILE, outputs.PROVENANCE_FILE])


def test_write_run_clears_an_earlier_error(result: RunResult, tmp_path: Path) -> None:
    outputs.write_error(tmp_path, "molp2s/gap", "correct", "baseline", "boom")
    assert json.loads((tmp_path / ERROR_FILE).read_text("utf-8")) == {
        "task": "molp2s/gap",
        "view": "correct",
        "model": "baseline",
        "error": "boom",
    }
    outputs.write_run(tmp_path, result, {})
    assert not (tmp_path / ERROR_FILE).exists()
    assert (tmp_path / METRICS_FILE).is_file()


def test_write_error_needs_no_task(tmp_path: Path) -> None:
    outputs.write_error(tmp_path / "new", None, None, None, "bad config")
    written = json.loads((tmp_path / "new" / ERROR_FILE).read_text("utf-8"))
    assert written == {"task": None, "view": None, "model": None, "error": "bad config"}


def test_provenance_json_is_redacted_and_hashes_the_inputs(
    result: RunResult, tmp_path: Path
) -> None:
    record = outputs.write_run(tmp_path, result, CONFIG)
    prov = json.loads((tmp_path / outputs.PROVENANCE_FILE).read_text("utf-8"))
    assert prov["config"]["model"] == {"name": "baseline", "api_key": REDACTED}
    assert "sk-not-a-real-key" not in (tmp_path / outputs.PROVENANCE_FILE).read_text("utf-8")
    assert prov["task"] == "molp2s/gap"
    assert prov["task_spec"]["name"] == "molp2s/gap"
    assert prov["task_spec_sha256"] == record["sha256"]["task_spec"]
    assert prov["data_files_sha256"] == record["sha256"]["data"]
    assert prov["data_root"] == str(result.data_root)
    for path in result.dataset.files:
        rel = path.relative_to(result.data_root).as_posix()
        assert prov["data_files_sha256"][rel] == sha256_file(path)
    assert prov["environment"]


# --- the records --------------------------------------------------------------------------------


def test_metrics_record_fields(result: RunResult) -> None:
    hashes = outputs.input_hashes(result)
    record = outputs.metrics_record(result, hashes, "abc")
    assert record["task"] == "molp2s/gap" and record["family"] == "molp2s"
    assert record["view"] == "correct"
    assert record["model"] == result.system_name == "baseline:molp2s_rdkit"
    assert record["model_id"] == result.system_identity
    assert record["primary"] == "accuracy"
    assert record["n"] == len(result.samples)
    assert record["metrics"]["accuracy"] == result.metrics["accuracy"].as_json()
    assert record["metrics"]["accuracy"]["ci_method"] == "wilson"
    assert list(record["statuses"]) == [s.value for s in Status]
    assert sum(record["statuses"].values()) == record["n"]
    assert record["counts"] == result.counts
    assert record["degraded"] == 0
    assert record["sha256"] == {**hashes, "samples.jsonl": "abc"}
    assert set(record["seconds"]) == set(result.seconds)


def test_metrics_record_counts_degraded_answers(result: RunResult) -> None:
    predictions = [dataclasses.replace(p) for p in result.predictions]
    predictions[0].degraded = "free text"
    predictions[1].degraded = "free text"
    changed = dataclasses.replace(result, predictions=predictions)
    assert outputs.metrics_record(changed, outputs.input_hashes(changed), "x")["degraded"] == 2


def test_system_record_caps_the_listed_ids() -> None:
    ids = [f"id{i}" for i in range(outputs.MAX_LISTED_IDS + 7)]
    report = SystemReport(files=[Path("/p/a.jsonl")], unknown_ids=ids, notes=["n1"])
    record = outputs.system_record(report)
    assert record == {
        "files": ["/p/a.jsonl"],
        "unknown_ids": ids[: outputs.MAX_LISTED_IDS],
        "unknown_ids_total": len(ids),
        "notes": ["n1"],
    }
    assert outputs.system_record(SystemReport(stats={"requests": 3}))["stats"] == {"requests": 3}


def test_small_values_keeps_small_serializable_values_only() -> None:
    circular: list[Any] = []
    circular.append(circular)
    info = {
        "view": "correct",
        "checks": {"smiles": "cached"},
        "path": Path("/x"),  # shown as text
        "bulky": "x" * 3000,
        "loop": circular,
    }
    kept = outputs.small_values(info)
    assert kept == {"view": "correct", "checks": {"smiles": "cached"}, "path": "/x"}
    assert outputs.small_values({"a": "12345"}, limit=7) == {"a": "12345"}  # '"12345"': 7
    assert outputs.small_values({"a": "123456"}, limit=7) == {}


def test_dataset_info_kept_by_small_values_can_be_written(
    result: RunResult, tmp_path: Path
) -> None:
    info = {"built": datetime(2024, 1, 1, tzinfo=UTC)}
    assert outputs.small_values(info) == {"built": "2024-01-01 00:00:00+00:00"}
    changed = dataclasses.replace(result, dataset=dataclasses.replace(result.dataset, info=info))
    outputs.write_run(tmp_path, changed, {})
    prov = json.loads((tmp_path / outputs.PROVENANCE_FILE).read_text("utf-8"))
    assert "2024-01-01" in str(prov["dataset_info"]["built"])


def test_provenance_record_lists_findings_and_dataset_info(result: RunResult) -> None:
    changed = dataclasses.replace(
        result,
        findings=[Finding("mp2s-0001", "odd candidate")],
        dataset=dataclasses.replace(result.dataset, info={"view": "correct", "big": "y" * 5000}),
    )
    record = outputs.provenance_record(changed, {"token": "t"}, outputs.input_hashes(changed))
    assert record["validation_findings"] == ["mp2s-0001: odd candidate"]
    assert record["dataset_info"] == {"view": "correct"}
    assert record["config"] == {"token": REDACTED}
    assert record["predictions_sha256"] == {}


def test_input_hashes_include_the_predictions_files(result: RunResult, tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"record_id": "x"}\n', encoding="utf-8")
    changed = dataclasses.replace(result, system_report=SystemReport(files=[answers]))
    hashes = outputs.input_hashes(changed)
    assert list(hashes["predictions"].values()) == [sha256_file(answers)]
    assert hashes["task_spec"] == outputs.input_hashes(result)["task_spec"]


def test_the_samples_file_records_answers_of_every_status(
    result: RunResult, tmp_path: Path
) -> None:
    predictions = [dataclasses.replace(p) for p in result.predictions]
    predictions[0] = Prediction(predictions[0].sample_id, status=Status.ERROR, detail="HTTP 500")
    changed = dataclasses.replace(result, predictions=predictions)
    outputs.write_run(tmp_path, changed, {})
    first = read_jsonl(tmp_path / outputs.SAMPLES_FILE)[0]
    assert first["status"] == "error" and first["detail"] == "HTTP 500"
    assert first["gold"] == result.samples[0].gold


@pytest.mark.parametrize("from_inputs", [False, True])
def test_only_a_models_answers_are_fsynced(
    result: RunResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, from_inputs: bool
) -> None:
    """A run whose answers come from its inputs is written again by running it again."""
    import dataclasses
    import os

    from benchreg.core.io import sha256_file

    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    record = outputs.write_run(
        tmp_path, dataclasses.replace(result, answers_from_inputs=from_inputs), {}
    )
    assert len(synced) == (0 if from_inputs else 3)
    assert record["sha256"]["samples.jsonl"] == sha256_file(tmp_path / outputs.SAMPLES_FILE)
