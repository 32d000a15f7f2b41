"""The files a run writes: metrics.json, samples.jsonl, provenance.json (all atomic)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchreg.core.io import (
    atomic_write_json,
    atomic_write_jsonl,
    json_default_or_text,
)
from benchreg.core.load import gc_paused
from benchreg.core.provenance import (
    environment,
    file_hashes,
    redact,
    redact_text,
    scrub,
    spec_sha256,
)
from benchreg.core.result import RunResult
from benchreg.core.runfolder import ERROR_FILE, METRICS_FILE
from benchreg.core.scoring import sample_rows
from benchreg.core.system import SystemReport
from benchreg.core.types import REPEAT_MARK, Prediction, Status

SAMPLES_FILE = "samples.jsonl"
PROVENANCE_FILE = "provenance.json"


MAX_LISTED_IDS = 50


def system_record(report: SystemReport) -> dict[str, Any]:
    """What the system reported beside its answers: files, ids it could not place, notes."""
    unknown = report.unknown_ids
    record: dict[str, Any] = {
        "files": [str(p) for p in report.files],
        "unknown_ids": unknown[:MAX_LISTED_IDS],
        "unknown_ids_total": len(unknown),
        "notes": report.notes,
    }
    if report.stats:
        record["stats"] = report.stats
    return record


def small_values(info: Mapping[str, Any], limit: int = 2000) -> dict[str, Any]:
    """What a loader said about its data (e.g. whether checks were skipped as cached), without
    bulky entries, as plain JSON values (an object JSON cannot hold is written as its text)."""
    out = {}
    for key, value in info.items():
        try:
            text = json.dumps(value, default=json_default_or_text)
        except (TypeError, ValueError):
            continue
        if len(text) <= limit:
            out[key] = json.loads(text)
    return out


def input_hashes(result: RunResult) -> dict[str, Any]:
    """sha256 of the task spec, every data file read and every predictions file read."""
    return {
        "task_spec": spec_sha256(result.spec),
        "data": file_hashes(result.dataset.files, result.data_root),
        "predictions": file_hashes(result.system_report.files),
    }


RESUME_HINT = (
    "run the same command again (the same hydra.run.dir / hydra.sweep.dir) to ask only the "
    "failed samples again, or add run.accept_errors=true to score them as wrong answers"
)
BUDGET_HINT = (
    "raise the budget (run.max_tokens_total, run.max_cost) and run the same command again (the "
    "same hydra.run.dir / hydra.sweep.dir) to ask only the requests not answered"
)
TRUNCATED = "length"  # finish_reason of an answer that stopped at the token limit


def truncated(predictions: Sequence[Prediction]) -> int:
    """Answers that stopped at the token limit (`finish_reason: length`)."""
    return sum(1 for p in predictions if p.metadata.get("finish_reason") == TRUNCATED)


def truncated_as(predictions: Sequence[Prediction]) -> dict[str, Any]:
    """What the answers cut at the token limit became: their statuses (a cut reply the parser
    cannot read is `invalid`), and how many of them were read and flagged `degraded` (scored
    as given; invalid in the strict view)."""
    cut = [p for p in predictions if p.metadata.get("finish_reason") == TRUNCATED]
    statuses: dict[str, int] = {}
    for pred in cut:
        statuses[pred.status.value] = statuses.get(pred.status.value, 0) + 1
    return {"statuses": statuses, "degraded": sum(1 for p in cut if p.degraded)}


def error_causes(predictions: Sequence[Prediction]) -> dict[str, int]:
    """Failed requests counted by cause (the first part of their detail)."""
    causes: dict[str, int] = {}
    for pred in predictions:
        if pred.status is Status.ERROR:
            cause = redact_text((pred.detail or "unknown").split(":", 1)[0].strip()[:80])
            causes[cause] = causes.get(cause, 0) + 1
    return dict(sorted(causes.items(), key=lambda kv: (-kv[1], kv[0])))


def completeness(result: RunResult) -> dict[str, Any]:
    """Why a run is not a result (`incomplete`), or that its failed requests were accepted."""
    failed = result.failed if result.requests else result.predictions
    if result.errors_accepted:  # still counted by cause: what was scored as wrong, and why
        return {"errors_accepted": result.errors, "accepted_by_cause": error_causes(failed)}
    if result.complete:
        return {}
    info: dict[str, Any] = {
        "errors": result.errors,
        "of": result.requests or len(result.samples),
        "by_cause": error_causes(failed),
    }
    if result.requests > len(result.samples):  # run.repeats: which repeats the failures hit
        info["by_repeat"] = _failed_by_repeat(failed)
    if result.stopped is not None:  # the same budget would stop the same command at once
        return {"incomplete": {**info, "stopped": result.stopped, "resume": BUDGET_HINT}}
    return {"incomplete": {**info, "resume": RESUME_HINT}}


def _failed_by_repeat(failed: Sequence[Prediction]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pred in failed:
        _, mark, repeat = pred.sample_id.rpartition(REPEAT_MARK)
        key = repeat if mark and repeat.isdigit() else "0"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: int(kv[0])))


def incomplete_message(record: Mapping[str, Any]) -> str:
    """One line for a run whose failed requests make it incomplete."""
    info = record.get("incomplete") or {}
    causes = ", ".join(f"{cause} ({n})" for cause, n in (info.get("by_cause") or {}).items())
    return (
        f"incomplete: {info.get('errors')} of {info.get('of')} requests failed"
        f"{f' ({causes})' if causes else ''}; the numbers are not a result: "
        f"{info.get('resume', RESUME_HINT)}"
    )


STRICT_NOTE = "degraded answers (read only by a fallback) counted as invalid"


def strict_record(result: RunResult) -> dict[str, Any]:
    """The strict view of every metric, beside the lenient one, when any answer was degraded."""
    if result.strict is None:
        return {}
    return {
        "strict": {name: m.as_json() for name, m in result.strict.items()},
        "strict_means": STRICT_NOTE,
    }


def metrics_record(
    result: RunResult, hashes: Mapping[str, Any], samples_sha256: str
) -> dict[str, Any]:
    spec = result.spec
    return {
        "task": spec.name,
        "family": spec.family,
        "view": result.view,
        "model": result.system_name,
        "model_id": result.system_identity,
        "primary": result.primary,
        "n": len(result.samples),
        "metrics": {name: m.as_json() for name, m in result.metrics.items()},
        **strict_record(result),
        "complete": result.complete,
        **completeness(result),
        "statuses": result.statuses,
        "degraded": sum(1 for p in result.predictions if p.degraded),
        "truncated": truncated(result.predictions),
        **_truncated_record(result.predictions),
        "counts": result.counts,
        **not_a_result(result.dataset.info),
        **({"floor": result.floor} if result.floor else {}),
        "system": system_record(result.system_report),
        "sha256": {**hashes, "samples.jsonl": samples_sha256},
        "seconds": {k: round(v, 4) for k, v in result.seconds.items()},
    }


def not_a_result(info: Mapping[str, Any]) -> dict[str, Any]:
    """`benchmark_result: false` and the loader's note (`not_a_result`) when the loader ran data
    that cannot be scored as a benchmark (a retrieval root run with `allow_void`)."""
    if info.get("benchmark_result") is not False:
        return {}
    return {"benchmark_result": False, "not_a_result": str(info.get("not_a_result") or "")}


def _truncated_record(predictions: Sequence[Prediction]) -> dict[str, Any]:
    """`truncated_as` when any answer was cut (records of other runs stay as they were)."""
    return {"truncated_as": truncated_as(predictions)} if truncated(predictions) else {}


def provenance_record(
    result: RunResult, config: Mapping[str, Any], hashes: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "task": result.spec.name,
        "task_spec_sha256": hashes["task_spec"],
        "task_spec": redact(result.spec.model_dump(mode="json")),
        "data_root": str(result.data_root),
        "data_files_sha256": hashes["data"],
        "predictions_sha256": hashes["predictions"],
        "dataset_info": small_values(result.dataset.info),
        "validation_findings": [str(f) for f in result.findings],
        "environment": environment(),
        "config": redact(dict(config)),
    }


def write_run(out_dir: Path, result: RunResult, config: Mapping[str, Any]) -> dict[str, Any]:
    """Write the run files; metrics.json goes last, as it marks the run complete.

    Each file is renamed into place once written, so no file is ever seen half-written. The
    files of a run whose answers were made from its inputs (a predictions file, a baseline) are
    not fsynced: running it again gives them back and asks no model (metrics.json holds the
    sha256 of samples.jsonl, so one cut short by a power loss is found). A model's answers are
    flushed to the disk."""
    durable = not result.answers_from_inputs
    with gc_paused():
        rows = scrub(
            sample_rows(
                result.samples,
                result.predictions,
                result.per_sample,
                result.primary,
                preview_answers=result.answers_from_inputs,
            )
        )
        hashes = input_hashes(result)
        samples_sha256 = atomic_write_jsonl(out_dir / SAMPLES_FILE, rows, durable=durable)
        del rows
    provenance = provenance_record(result, config, hashes)
    atomic_write_json(out_dir / PROVENANCE_FILE, provenance, durable=durable)
    record = redact(metrics_record(result, hashes, samples_sha256))
    atomic_write_json(out_dir / METRICS_FILE, record, durable=durable)
    (out_dir / ERROR_FILE).unlink(missing_ok=True)
    return record


def write_error(
    out_dir: Path, task: str | None, view: str | None, model: str | None, message: str
) -> None:
    atomic_write_json(
        out_dir / ERROR_FILE,
        redact({"task": task, "view": view, "model": model, "error": message}),
    )
