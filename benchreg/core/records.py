"""The files a run writes: metrics.json, samples.jsonl, provenance.json (all atomic)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchreg.core.io import atomic_write_json, atomic_write_jsonl
from benchreg.core.provenance import environment, file_hashes, redact, spec_sha256
from benchreg.core.run import RunResult
from benchreg.core.scoring import sample_rows

METRICS_FILE = "metrics.json"
SAMPLES_FILE = "samples.jsonl"
PROVENANCE_FILE = "provenance.json"
ERROR_FILE = "error.json"


MAX_LISTED_IDS = 50


def predictions_record(result: RunResult) -> dict[str, Any] | None:
    """What the predictions file held that is not a sample's answer: unknown ids and notes."""
    prediction_set = result.prediction_set
    if prediction_set is None:
        return None
    unknown = prediction_set.unknown_ids
    return {
        "files": [str(p) for p in prediction_set.files],
        "unknown_ids": unknown[:MAX_LISTED_IDS],
        "unknown_ids_total": len(unknown),
        "notes": prediction_set.notes,
    }


def metrics_record(result: RunResult) -> dict[str, Any]:
    spec = result.spec
    record = {
        "task": spec.name,
        "family": spec.family,
        "view": result.view,
        "model": result.system_name,
        "primary": spec.primary.output_name,
        "n": len(result.samples),
        "metrics": {name: m.as_json() for name, m in result.metrics.items()},
        "counts": result.counts,
        "seconds": {k: round(v, 4) for k, v in result.seconds.items()},
    }
    predictions = predictions_record(result)
    if predictions is not None:
        record["predictions"] = predictions
    return record


def provenance_record(result: RunResult, config: Mapping[str, Any]) -> dict[str, Any]:
    prediction_files = result.prediction_set.files if result.prediction_set else []
    return {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "task": result.spec.name,
        "task_spec_sha256": spec_sha256(result.spec),
        "task_spec": result.spec.model_dump(mode="json"),
        "data_root": str(result.data_root),
        "data_files_sha256": file_hashes(result.dataset.files, result.data_root),
        "predictions_sha256": file_hashes(prediction_files),
        "validation_findings": [str(f) for f in result.findings],
        "environment": environment(),
        "config": redact(dict(config)),
    }


def write_run(out_dir: Path, result: RunResult, config: Mapping[str, Any]) -> dict[str, Any]:
    """Write the run files; metrics.json goes last, as it marks the run complete."""
    rows = sample_rows(
        result.samples, result.predictions, result.per_sample, result.spec.primary.output_name
    )
    record = metrics_record(result)
    atomic_write_jsonl(out_dir / SAMPLES_FILE, rows)
    atomic_write_json(out_dir / PROVENANCE_FILE, provenance_record(result, config))
    atomic_write_json(out_dir / METRICS_FILE, record)
    (out_dir / ERROR_FILE).unlink(missing_ok=True)
    return record


def write_error(
    out_dir: Path, task: str | None, view: str | None, model: str | None, message: str
) -> None:
    atomic_write_json(
        out_dir / ERROR_FILE, {"task": task, "view": view, "model": model, "error": message}
    )
