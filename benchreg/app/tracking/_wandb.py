"""Log job records to Weights & Biases as offline runs (`<dir>/wandb/offline-run-*`): nothing is
sent anywhere; `wandb sync <dir>/wandb/offline-run-*` uploads them when the user chooses.

Each run's files hold `benchreg-export.json` (the record's fingerprint, status, params and
metrics): the export reads those of the runs under `<dir>/wandb/` to skip a job exported before.
W&B's own collection of the machine's details, git state, code, requirements and system
statistics is switched off: a run holds what the run folder says and nothing else."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from benchreg.app.tracking._extras import import_extra
from benchreg.app.tracking._lock import exclusive
from benchreg.app.tracking._outcome import Outcome
from benchreg.app.tracking._records import FINGERPRINT_TAG, STATUS_TAG, JobExport
from benchreg.core.errors import BenchregError

DEFAULT_PROJECT = "benchreg"
MARKER = "benchreg-export.json"
RUNS_GLOB = "*run-*/files/" + MARKER  # offline-run-* and, once synced, run-*


def export_wandb(records: list[JobExport], project: str, directory: Path) -> Outcome:
    """Log each record not exported before as one offline W&B run under ``directory``."""
    wandb = import_extra("wandb", "wandb")
    directory = directory.resolve()
    runs = directory / "wandb"
    where = f"project {project!r}, offline runs in {runs} (upload: wandb sync {runs}/offline-run-*)"
    outcome = Outcome(target="wandb", where=where)
    with exclusive(runs / ".benchreg-export.lock"):
        exported = exported_fingerprints(runs)
        for record in records:
            if record.fingerprint in exported:
                outcome.skipped.append(record)
                continue
            try:
                run_id = _log_run(wandb, record, project, directory)
            except Exception as exc:
                first_line = (str(exc).strip().splitlines() or [""])[0][:300]
                raise BenchregError(
                    f"W&B could not write the offline run of {record.folder.name} "
                    f"({type(exc).__name__}: {first_line})",
                    where=runs,
                    fix="check that --dir is a writable folder",
                ) from None
            outcome.logged.append((record, run_id))
            exported.add(record.fingerprint)
    return outcome


def exported_fingerprints(runs: Path) -> set[str]:
    """The fingerprints of the runs already under ``runs`` (a marker file that cannot be read
    counts as no run: the job is exported again)."""
    found = set()
    for marker in runs.glob(RUNS_GLOB):
        try:
            found.add(str(json.loads(marker.read_text("utf-8"))["fingerprint"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def _settings(wandb: Any) -> Any:
    return wandb.Settings(
        mode="offline",
        console="off",
        silent=True,
        disable_git=True,
        disable_code=True,
        save_code=False,
        x_disable_meta=True,
        x_disable_stats=True,
        x_disable_machine_info=True,
        x_save_requirements=False,
        host="",  # the machine's name: not the run's
    )


def _log_run(wandb: Any, record: JobExport, project: str, directory: Path) -> str:
    run = wandb.init(
        dir=str(directory),
        project=project,
        name=record.name,
        config={**record.params, **record.tags},
        tags=["benchreg", record.status],
        settings=_settings(wandb),
        reinit="create_new",
    )
    try:
        if record.metrics:
            run.log(dict(record.metrics))
        files = Path(run.dir)
        for path, folder in record.artifacts:
            target = files / folder / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            run.save(str(target), base_path=str(files), policy="now")
        _write_marker(run, files, record)
    except BaseException:
        run.finish(exit_code=1)
        raise
    run.finish()
    return str(run.id)


def _write_marker(run: Any, files: Path, record: JobExport) -> None:
    """Written last: a run cut short has none, so its job is exported again next time."""
    marker = files / MARKER
    payload = {
        "fingerprint": record.fingerprint,
        "status": record.status,
        "job": str(record.folder),
        "params": record.params,
        "metrics": record.metrics,
        "tags": {k: v for k, v in record.tags.items() if k not in (FINGERPRINT_TAG, STATUS_TAG)},
    }
    marker.write_text(json.dumps(payload, indent=2, sort_keys=True), "utf-8")
    run.save(str(marker), base_path=str(files), policy="now")
