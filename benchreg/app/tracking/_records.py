"""What one job exports to a tracking server, read from its run folder only.

Everything comes from the files the run wrote (metrics.json, provenance.json, run.json and a
sweep's report), which hold no secret: the config in provenance.json is saved redacted, and
every value is passed through the redaction once more in case a secret was registered in this
process (the sweep hook runs where the API keys were read).

A record's fingerprint is the sha256 of its metrics.json and provenance.json bytes: the same
run exported twice has the same fingerprint (the export skips it), and a run made again, or
resumed until complete, has a new one."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from benchreg.core.analysis import (
    PROVENANCE_FILE,
    JobRecord,
    is_sweep_folder,
    job_folders,
    read_job,
)
from benchreg.core.errors import BenchregError
from benchreg.core.not_a_result import NOT_A_RESULT
from benchreg.core.provenance import redact_text
from benchreg.core.runfolder import ERROR_FILE, METRICS_FILE, RUN_FILE
from benchreg.core.summary import DEMO_SHOWN, INCOMPLETE, result_state

SAMPLES_FILE = "samples.jsonl"
REPORT_FILES = ("report/report.md", "report/index.html")  # a sweep's report, beside its jobs
FINGERPRINT_TAG = "benchreg.fingerprint"
STATUS_TAG = "benchreg.status"
FOLDER_HINT = (
    "pass run folders (each holds metrics.json), sweep folders (the hydra.sweep.dir of a `-m` "
    "run) or a folder holding them, such as outputs/"
)

Status = Literal["ok", "incomplete", "not_a_result", "demonstration"]


@dataclass(frozen=True)
class JobExport:
    """One job as a tracking run: ``metrics`` is empty unless the run is a benchmark result
    (``status`` ok), so an incomplete run never looks like a score."""

    folder: Path
    name: str
    status: Status
    fingerprint: str
    params: dict[str, str]
    metrics: dict[str, float]
    tags: dict[str, str]
    artifacts: tuple[tuple[Path, str], ...]  # (file, folder inside the tracking run's files)


@dataclass(frozen=True)
class Found:
    """The run folders under the folders given, and the jobs that have nothing to export."""

    folders: list[Path]
    not_exported: list[str]


def find_run_folders(paths: list[Path]) -> Found:
    """The finished run folders of ``paths`` (run folders, sweep folders, folders holding them),
    in order and once each; a path with none is a :class:`BenchregError` naming it."""
    folders: list[Path] = []
    not_exported: list[str] = []
    for path in paths:
        if not path.exists():
            raise BenchregError("no such folder", where=path, fix=FOLDER_HINT)
        if (path / METRICS_FILE).is_file() or (path / RUN_FILE).is_file():
            _add_run_folder(path, folders, not_exported)
        elif is_sweep_folder(path):
            for job in job_folders(path):
                _add_run_folder(job, folders, not_exported)
        elif path.is_dir() and (below := runs_below(path)):
            folders += below
        else:
            what = "a file" if path.is_file() else "no run folder or sweep folder in it"
            raise BenchregError(what, where=path, fix=FOLDER_HINT)
    unique = list(dict.fromkeys(folder.resolve() for folder in folders))
    return Found(unique, not_exported)


def runs_below(folder: Path) -> list[Path]:
    """The finished run folders anywhere under ``folder`` (a day's or a lab's `outputs/`): a
    metrics.json beside its samples.jsonl (a copy of metrics.json alone, as in an exported
    tracking run's files, is no run)."""
    return sorted(
        metrics.parent
        for metrics in folder.rglob(METRICS_FILE)
        if (metrics.parent / SAMPLES_FILE).is_file() and not (metrics.parent / ERROR_FILE).is_file()
    )


def _add_run_folder(folder: Path, folders: list[Path], not_exported: list[str]) -> None:
    if (folder / ERROR_FILE).is_file():
        not_exported.append(f"{folder}: failed (error.json)")
    elif not (folder / METRICS_FILE).is_file():
        not_exported.append(f"{folder}: not finished (no metrics.json)")
    else:
        folders.append(folder)


def read_export(folder: Path) -> JobExport:
    """The record of one finished run folder, every file checked (a damaged one is a
    :class:`benchreg.core.analysis.DamagedFileError` naming it)."""
    job = read_job(folder, full=True)
    status = job_status(job.metrics)
    digest = fingerprint(folder)
    return JobExport(
        folder=folder,
        name=redact_text(f"{job.task} {job.view or '-'} {job.model}"),
        status=status,
        fingerprint=digest,
        params=_redacted(job_params(job)),
        metrics=job_metrics(job.metrics) if status == "ok" else {},
        tags=_redacted(job_tags(job, status, digest)),
        artifacts=job_artifacts(folder),
    )


STATUS_OF_STATE: dict[str, Status] = {
    INCOMPLETE: "incomplete",
    NOT_A_RESULT: "not_a_result",
    DEMO_SHOWN: "demonstration",
}


def job_status(metrics: dict[str, Any]) -> Status:
    """ok, or why the run's values are no benchmark result (:func:`result_state`: failed
    requests, data that is no benchmark, demonstration data); a run with nothing to test is
    exported as it is: its missing values and CI are simply not logged."""
    return STATUS_OF_STATE.get(result_state(metrics)[0], "ok")


def fingerprint(folder: Path) -> str:
    digest = hashlib.sha256((folder / METRICS_FILE).read_bytes())
    provenance = folder / PROVENANCE_FILE
    if provenance.is_file():
        digest.update(b"\n")
        digest.update(provenance.read_bytes())
    return digest.hexdigest()


def job_params(job: JobRecord) -> dict[str, str]:
    """task, view, model label and identity, versions and the sha256 of every input."""
    metrics, provenance = job.metrics, job.provenance
    sha = metrics.get("sha256") or {}
    data = dict(sha.get("data") or provenance.get("data_files_sha256") or {})
    predictions = dict(sha.get("predictions") or provenance.get("predictions_sha256") or {})
    params = {
        "task": job.task,
        "family": job.family,
        "view": job.view or "",
        "model": job.model,
        "model_label": job.label or "",
        "model_id": job.model_id,
        "primary": str(metrics.get("primary") or ""),
        "n": str(metrics.get("n", "")),
        "benchreg_version": str((provenance.get("environment") or {}).get("benchreg", "")),
        "task_spec_sha256": str(sha.get("task_spec") or provenance.get("task_spec_sha256") or ""),
        "data_sha256": combined_sha256(data),
        "predictions_sha256": combined_sha256(predictions),
    }
    params |= {f"data_sha256.{name}": str(value) for name, value in sorted(data.items())}
    params |= {f"predictions_sha256.{name}": str(v) for name, v in sorted(predictions.items())}
    return params


def combined_sha256(files: dict[str, Any]) -> str:
    """One digest for a set of files (their names and sha256): one column to compare runs by;
    the empty string when there are none."""
    if not files:
        return ""
    if len(files) == 1:
        return str(next(iter(files.values())))
    lines = "".join(f"{name}\t{value}\n" for name, value in sorted(files.items()))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def job_metrics(metrics: dict[str, Any]) -> dict[str, float]:
    """Value, 95% CI bounds, n and denominator of every metric (and of its strict view when
    degraded answers made one), and the count of each answer status."""
    values: dict[str, float] = {}
    for prefix, group in (("", metrics.get("metrics")), ("strict.", metrics.get("strict"))):
        for name, metric in (group or {}).items():
            values |= _metric_values(f"{prefix}{name}", metric)
    for status, count in (metrics.get("statuses") or {}).items():
        values[f"statuses.{status}"] = float(count)
    return {name: value for name, value in values.items() if math.isfinite(value)}


def _metric_values(name: str, metric: dict[str, Any]) -> dict[str, float]:
    low, high = [*(metric.get("ci95") or []), None, None][:2]
    found = {
        name: metric.get("value"),
        f"{name}.ci95_low": low,
        f"{name}.ci95_high": high,
        f"{name}.n": metric.get("n"),
        f"{name}.denominator": metric.get("denominator"),
    }
    return {key: float(value) for key, value in found.items() if _is_number(value)}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def job_tags(job: JobRecord, status: Status, digest: str) -> dict[str, str]:
    metrics = job.metrics
    tags = {
        FINGERPRINT_TAG: digest,
        STATUS_TAG: status,
        "benchreg.job": job.dir.name,
        "benchreg.task": job.task,
        "benchreg.view": job.view or "",
        "benchreg.model_id": job.model_id,
    }
    run_record = _read_optional_json(job.dir / RUN_FILE)
    if run_record.get("fingerprint"):
        tags["benchreg.inputs_fingerprint"] = str(run_record["fingerprint"])
    if status == "incomplete":
        tags["benchreg.incomplete"] = json.dumps(metrics.get("incomplete") or {})[:2000]
    if status in ("not_a_result", "demonstration"):
        tags["benchreg.not_a_result"] = result_state(metrics)[1]
    return tags


def _read_optional_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def job_artifacts(folder: Path) -> tuple[tuple[Path, str], ...]:
    """metrics.json and provenance.json, and the report of the sweep the job belongs to; a file
    that holds what looks like a secret (benchreg writes none: edited by hand?) stops the
    export."""
    files = [(folder / name, "") for name in (METRICS_FILE, PROVENANCE_FILE)]
    if is_sweep_folder(folder.parent):
        files += [(folder.parent / name, "report") for name in REPORT_FILES]
    found = tuple((path, where) for path, where in files if path.is_file())
    for path, _ in found:
        text = path.read_text("utf-8", errors="replace")
        if redact_text(text) != text:
            raise BenchregError(
                "holds what looks like a secret (a key, token or password in a URL); not exported",
                where=path,
                fix="remove it from the file, or run the job again: benchreg writes its files "
                "redacted",
            )
    return found


def _redacted(values: dict[str, str]) -> dict[str, str]:
    return {key: redact_text(value) for key, value in values.items()}
