"""Log job records to MLflow: one MLflow run per job, skipped when a run with the job's
fingerprint tag is there already.

The store is MLflow's own: a URI given (`--tracking-uri`), else `$MLFLOW_TRACKING_URI`, else
`sqlite:///mlflow.db` in the current folder (MLflow's default). A sqlite store keeps the
artifacts of an experiment it creates in `mlartifacts/` beside the database file. A plain path
or `file://` URI is MLflow's file store, which MLflow 3 keeps only in maintenance mode: the
export allows it (`MLFLOW_ALLOW_FILE_STORE`), since the user asked for it by name."""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from benchreg.app.tracking._extras import import_extra
from benchreg.app.tracking._lock import exclusive
from benchreg.app.tracking._outcome import Outcome
from benchreg.app.tracking._records import FINGERPRINT_TAG, JobExport
from benchreg.core.errors import BenchregError
from benchreg.core.runfolder import refuse_inside_run_folder

DEFAULT_EXPERIMENT = "benchreg"
MAX_KEY = 250  # MLflow's limits on names and values
MAX_PARAM_VALUE = 6000
MAX_TAG_VALUE = 8000
# a server that does not answer: MLflow's own retries wait minutes; yours are kept when set
SERVER_PATIENCE = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "30",
}
PER_BATCH = 100  # params or tags per log_batch call
METRICS_PER_BATCH = 1000


def resolve_uri(tracking_uri: str | None) -> str:
    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or ""
    if not uri:
        return "sqlite:///" + str(Path("mlflow.db").resolve())
    scheme = urlparse(uri).scheme
    if scheme in ("", "file"):
        os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    for name, value in SERVER_PATIENCE.items():
        os.environ.setdefault(name, value)
    return uri


def export_mlflow(
    records: list[JobExport], tracking_uri: str | None, experiment: str = DEFAULT_EXPERIMENT
) -> Outcome:
    """Log each record not exported before into ``experiment`` of the store."""
    uri = resolve_uri(tracking_uri)
    tracking = import_extra("mlflow.tracking", "mlflow-skinny")
    outcome = Outcome(target="mlflow", where=f"experiment {experiment!r} at {uri}")
    lock = store_lock(uri)
    if lock is not None:  # a local store: never inside a run folder
        refuse_inside_run_folder(lock.parent, fix="pass --tracking-uri outside the run folder")
    with exclusive(lock):
        _export(tracking, uri, experiment, records, outcome)
    return outcome


def store_lock(uri: str) -> Path | None:
    """The lock file of a local store, beside its sqlite database or file-store folder (a
    server orders its own writes)."""
    database = sqlite_database(uri)
    if database is not None:
        return Path(f"{database}.benchreg-export.lock")
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        return Path(str(Path(parsed.path or uri)) + ".benchreg-export.lock")
    return None


def _export(
    tracking: Any, uri: str, experiment: str, records: list[JobExport], outcome: Outcome
) -> None:
    try:
        client = tracking.MlflowClient(tracking_uri=uri)
        experiment_id = _experiment_id(client, experiment, uri)
        for record in records:
            if _exported(client, experiment_id, record.fingerprint):
                outcome.skipped.append(record)
            else:
                outcome.logged.append((record, _log_run(client, experiment_id, record)))
    except BenchregError:
        raise
    except Exception as exc:
        first_line = (str(exc).strip().splitlines() or [""])[0][:300]
        raise BenchregError(
            f"the MLflow store did not take the export ({type(exc).__name__}: {first_line})",
            where=uri,
            fix="check --tracking-uri: a local store (sqlite:///<file>.db or a folder), or the "
            "URL of a running MLflow server",
        ) from None


def _experiment_id(client: Any, name: str, uri: str) -> str:
    found = client.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    return str(client.create_experiment(name, artifact_location=_artifact_location(uri)))


def _artifact_location(uri: str) -> str | None:
    """For a sqlite store, `mlartifacts/` beside the database (MLflow would use the current
    folder); other stores decide themselves."""
    database = sqlite_database(uri)
    if database is None:
        return None
    folder = database.resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    return (folder / "mlartifacts").as_uri()


def sqlite_database(uri: str) -> Path | None:
    """The database file of a `sqlite:///` URI (None: another store, or in memory)."""
    if not uri.startswith("sqlite:///"):
        return None
    database = uri.removeprefix("sqlite:///")
    return Path(database) if database and not database.startswith(":memory:") else None


def _exported(client: Any, experiment_id: str, digest: str) -> bool:
    found = client.search_runs(
        [experiment_id], filter_string=f"tags.`{FINGERPRINT_TAG}` = '{digest}'", max_results=1
    )
    return bool(found)


def _log_run(client: Any, experiment_id: str, record: JobExport) -> str:
    """One MLflow run for ``record``; the fingerprint tag is set last, so that a run cut short
    (marked FAILED) is not taken for an exported one and the job is logged again next time."""
    entities = import_extra("mlflow.entities", "mlflow-skinny")
    tags = {key: value for key, value in record.tags.items() if key != FINGERPRINT_TAG}
    run = client.create_run(experiment_id, tags=_tags(tags), run_name=record.name)
    run_id = str(run.info.run_id)
    try:
        now = int(time.time() * 1000)
        metrics = [entities.Metric(mlflow_key(k), v, now, 0) for k, v in record.metrics.items()]
        params = [
            entities.Param(mlflow_key(k), v[:MAX_PARAM_VALUE]) for k, v in record.params.items()
        ]
        for chunk in _chunks(params, PER_BATCH):
            client.log_batch(run_id, params=chunk)
        for chunk in _chunks(metrics, METRICS_PER_BATCH):
            client.log_batch(run_id, metrics=chunk)
        for path, folder in record.artifacts:
            client.log_artifact(run_id, str(path), artifact_path=folder or None)
        client.set_tag(run_id, FINGERPRINT_TAG, record.fingerprint)
    except BaseException:
        with contextlib.suppress(Exception):  # the first error is the one to report
            client.set_terminated(run_id, status="FAILED")
        raise
    client.set_terminated(run_id, status="FINISHED")
    return run_id


def _tags(tags: dict[str, str]) -> dict[str, str]:
    return {mlflow_key(key): value[:MAX_TAG_VALUE] for key, value in tags.items()}


def mlflow_key(name: str) -> str:
    """A name MLflow accepts (letters, digits, `_-. /`; no empty, `.` or `..` path part):
    `recall@10` is `recall_at_10`."""
    text = re.sub(r"[^/\w.\- ]", "_", name.replace("@", "_at_"))
    parts = [part if part not in ("", ".", "..") else "_" for part in text.split("/")]
    return posixpath.join(*parts)[:MAX_KEY]


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
