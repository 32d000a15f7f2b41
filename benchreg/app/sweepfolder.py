"""One sweep per folder: the planned jobs are recorded, a second sweep is kept out.

``sweep.json`` lists the planned jobs (their overrides) when the sweep starts. Running the same
sweep again into the same folder resumes it: finished jobs are kept, unfinished ones resumed,
failed ones run again (a failed job's folder that kept no answer is claimed anew), and a job whose
metrics.json is damaged is resumed and written again. With `run.overwrite=true` added (still the
same sweep), a job folder holding a run of other inputs is replaced; finished jobs are still kept.
Another sweep into that folder is refused (unless every job of the sweep it holds failed before
keeping an answer: the corrected command then takes the folder), and so is a second process while
the first holds the folder's lock (`.sweep.lock`, removed when the sweep ends). The job states are
read from the job folders, never from a process's memory, so they are right under any launcher.
``multirun.yaml`` is the sweep's config as Hydra's basic sweeper saves it, with secrets redacted
and the sweep folder written out.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loguru import logger
from omegaconf import DictConfig, OmegaConf

from benchreg.core.errors import BenchregError
from benchreg.core.io import atomic_write_json
from benchreg.core.provenance import redact, redact_override
from benchreg.core.runfolder import (
    ERROR_FILE,
    METRICS_FILE,
    RUN_FILE,
    failed_attempt_only,
    metrics_damage,
    release_lock,
    run_is_incomplete,
    try_lock,
)

SWEEP_FILE = "sweep.json"
MULTIRUN_FILE = "multirun.yaml"
SWEEP_LOCK = ".sweep.lock"
# folders of the sweep dir that are no job: `benchreg report` and `benchreg compare` outputs
NOT_JOB_FOLDERS = frozenset({"report", "compare"})
# overrides that change how a job's folder is treated, not what the job is
FOLDER_OPTIONS = frozenset({"run.overwrite"})


def claim_sweep(sweep_dir: Path, jobs: Sequence[Sequence[str]]) -> Any:
    """Lock ``sweep_dir`` for this sweep (returns the lock to release) after checking that it
    holds no other sweep."""
    sweep_dir.mkdir(parents=True, exist_ok=True)
    lock = try_lock(
        sweep_dir / SWEEP_LOCK,
        "another sweep is running in this folder",
        fix="wait for it, or give this sweep its own hydra.sweep.dir",
    )
    planned = [[redact_override(o) for o in job] for job in jobs]  # never a secret on disk
    recorded = planned_jobs(sweep_dir)
    if recorded is not None and _compared(recorded) != _compared(planned):
        failed = failed_job_folders(sweep_dir)
        if failed is None:
            release_lock(lock)
            raise another_sweep(sweep_dir, recorded)
        for folder in failed:  # nothing in them is a result: the corrected sweep goes there
            shutil.rmtree(folder)
        logger.info(f"{sweep_dir}: every job of the sweep it held failed before keeping an answer")
        recorded = None
    if recorded is None:
        atomic_write_json(
            sweep_dir / SWEEP_FILE,
            {"started": datetime.now(UTC).isoformat(timespec="seconds"), "jobs": planned},
        )
    return lock


def another_sweep(sweep_dir: Path, recorded: list[list[str]]) -> BenchregError:
    return BenchregError(
        f"the sweep folder holds another sweep ({len(recorded)} jobs, e.g. "
        f"{' '.join(recorded[0]) if recorded else '-'})",
        where=sweep_dir,
        fix="give this sweep its own hydra.sweep.dir (re-running the same sweep resumes it)",
    )


def failed_job_folders(sweep_dir: Path) -> list[Path] | None:
    """The job folders of a sweep whose every started job failed before keeping an answer
    (error.json, its claim, failed requests only), or None when none failed or any job holds
    more: a result, answers, or a run that may still come back."""
    folders = [p for p in sweep_dir.iterdir() if _job_folder(p)]
    failed = 0
    for folder in folders:
        names = {p.name for p in folder.iterdir()}
        if names and (ERROR_FILE not in names or not failed_attempt_only(folder)):
            return None
        failed += bool(names)
    return folders if failed else None


def _compared(jobs: Sequence[Sequence[str]]) -> list[list[str]]:
    """The jobs as two sweeps are compared: without the options that say how to treat a job
    folder (`run.overwrite=true` added to the same sweep redoes its failed jobs)."""
    return [[o for o in job if _key(o) not in FOLDER_OPTIONS] for job in jobs]


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def release(lock: Any) -> None:
    release_lock(lock)


def write_multirun_yaml(config: DictConfig, sweep_dir: Path) -> None:
    """The sweep's config, redacted, with the sweep folder written out (re-resolving
    `${now:...}` later could name the next second)."""
    safe = redacted(OmegaConf.to_container(config, resolve=False))
    safe.setdefault("hydra", {}).setdefault("sweep", {})["dir"] = str(sweep_dir)
    save_yaml(safe, sweep_dir / MULTIRUN_FILE)


def save_yaml(plain: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(OmegaConf.to_yaml(OmegaConf.create(plain)))


def redacted(plain: Any) -> Any:
    """A config as plain containers (or a list of overrides), secrets redacted: every value of a
    secret key or of a secret form, and the overrides Hydra records (`hydra.overrides.*`,
    `hydra.job.override_dirname`) read as overrides."""
    if isinstance(plain, list):
        return [redact_override(str(item)) for item in plain]
    safe = redact(plain)
    hydra = safe.get("hydra") if isinstance(safe, dict) else None
    if not isinstance(hydra, dict):
        return safe
    overrides = hydra.get("overrides")
    for key in ("task", "hydra"):
        if isinstance(overrides, dict) and isinstance(overrides.get(key), list):
            overrides[key] = [redact_override(str(o)) for o in overrides[key]]
    job = hydra.get("job")
    if isinstance(job, dict) and isinstance(job.get("override_dirname"), str):
        job["override_dirname"] = ",".join(
            redact_override(o) for o in job["override_dirname"].split(",")
        )
    return safe


def planned_jobs(sweep_dir: Path) -> list[list[str]] | None:
    try:
        data = json.loads((sweep_dir / SWEEP_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    jobs = data.get("jobs") if isinstance(data, dict) else None
    return jobs if isinstance(jobs, list) else None


@dataclass(frozen=True, slots=True)
class JobState:
    num: int | None
    name: str  # the job folder's name, or the planned overrides of a job never started
    state: str  # ok | incomplete | failed | damaged | unfinished | not started
    folder: Path | None = None
    detail: str | None = None  # damaged: `<file>[:line]: <why>`


def job_states(sweep_dir: Path) -> list[JobState]:
    """Every job of the sweep: from its folder, plus the planned jobs that have no folder."""
    states: list[JobState] = []
    seen: set[int] = set()
    for folder in sorted((p for p in sweep_dir.iterdir() if _job_folder(p)), key=_order):
        num = _num(folder)
        damage = metrics_damage(folder)
        if (folder / ERROR_FILE).is_file():
            state = "failed"
        elif damage is not None:
            state = "damaged"
        elif (folder / METRICS_FILE).is_file():
            state = "incomplete" if run_is_incomplete(folder) else "ok"
        elif (folder / RUN_FILE).is_file() or any(folder.iterdir()):
            state = "unfinished"
        else:
            continue
        if num is not None:
            seen.add(num)
        states.append(JobState(num, folder.name, state, folder, damage))
    for num, overrides in enumerate(planned_jobs(sweep_dir) or []):
        if num not in seen:
            states.append(JobState(num, " ".join(overrides), "not started"))
    return states


def done_jobs(sweep_dir: Path) -> int:
    """How many jobs of :func:`job_states` are `ok` or `failed`, with one directory listing per
    job folder (the sweep counts them at the start of every job)."""
    done = 0
    with os.scandir(sweep_dir) as entries:
        for entry in entries:
            if entry.name.startswith(".") or entry.name in NOT_JOB_FOLDERS or not entry.is_dir():
                continue
            try:
                names = set(os.listdir(entry.path))
            except OSError:
                continue
            failed = ERROR_FILE in names
            folder = Path(entry.path)
            ok = (
                not failed
                and METRICS_FILE in names
                and metrics_damage(folder) is None
                and not run_is_incomplete(folder)
            )
            done += failed or ok
    return done


def _job_folder(path: Path) -> bool:
    """Not a launcher's own folder (submitit's `.submitit/`, hidden ones) nor the report's."""
    return path.is_dir() and not path.name.startswith(".") and path.name not in NOT_JOB_FOLDERS


def _num(folder: Path) -> int | None:
    head = folder.name.split("_", 1)[0]
    return int(head) if head.isdigit() else None


def _order(folder: Path) -> tuple[int, str]:
    num = _num(folder)
    return (num if num is not None else 1 << 30, folder.name)
