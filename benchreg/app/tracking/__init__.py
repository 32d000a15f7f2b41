"""`python -m benchreg export mlflow|wandb <run or sweep folder>...`: one tracking run per job.

Each finished job becomes one MLflow run (:mod:`._mlflow`) or one offline W&B run
(:mod:`._wandb`) holding what its run folder says (:mod:`._records`): params (task, view, model
label and identity, versions, input sha256), metrics (value, CI bounds, n and denominator of
every metric), tags (status, fingerprint) and the files metrics.json, provenance.json and the
sweep's report. A job already exported (same fingerprint) is skipped. The sweep hook
(:mod:`.hook`) exports each job of a sweep as it ends."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from loguru import logger

from benchreg.app.tracking._outcome import Outcome
from benchreg.app.tracking._records import (
    FOLDER_HINT,
    JobExport,
    find_run_folders,
    read_export,
)
from benchreg.core.errors import BenchregError
from benchreg.core.runfolder import refuse_inside_run_folder

TARGETS = ("mlflow", "wandb")
TARGET_OPTIONS = {"mlflow": ("tracking_uri", "experiment"), "wandb": ("project", "dir")}


@dataclass(frozen=True)
class Destination:
    """Where records go: ``target`` and its options (None: the default)."""

    target: str
    tracking_uri: str | None = None
    experiment: str | None = None
    project: str | None = None
    dir: Path | None = None


def run(args: argparse.Namespace) -> int:
    destination = destination_of(args)
    found = find_run_folders(list(args.folders))
    for note in found.not_exported:
        logger.warning(f"not exported: {note}")
    records = unique_records(read_export(folder) for folder in found.folders)
    if not records:
        folders = ", ".join(str(path) for path in args.folders)
        raise BenchregError("no finished run to export", where=folders, fix=FOLDER_HINT)
    for line in export_records(records, destination).lines():
        print(line)
    return 0


def destination_of(args: argparse.Namespace) -> Destination:
    """The target and its options; an option of the other target is a usage error."""
    for target, names in TARGET_OPTIONS.items():
        given = [name for name in names if getattr(args, name, None) is not None]
        if target != args.target and given:
            option = "--" + given[0].replace("_", "-")
            raise BenchregError(
                f"export {args.target}: {option} is an option of export {target}",
                fix=f"leave it out, or run export {target}",
            )
    return Destination(
        target=args.target,
        tracking_uri=args.tracking_uri,
        experiment=args.experiment,
        project=args.project,
        dir=args.dir,
    )


def unique_records(records: Iterable[JobExport]) -> list[JobExport]:
    """Each run once (a folder given twice, or a sweep and one of its jobs)."""
    seen: dict[str, JobExport] = {}
    for record in records:
        seen.setdefault(record.fingerprint, record)
    return list(seen.values())


def export_records(records: list[JobExport], destination: Destination) -> Outcome:
    if destination.target == "mlflow":
        from benchreg.app.tracking._mlflow import DEFAULT_EXPERIMENT, export_mlflow

        experiment = destination.experiment or DEFAULT_EXPERIMENT
        return export_mlflow(records, destination.tracking_uri, experiment)
    if destination.target == "wandb":
        from benchreg.app.tracking._wandb import DEFAULT_PROJECT, export_wandb

        project = destination.project or DEFAULT_PROJECT
        folder = destination.dir or Path(".")
        refuse_inside_run_folder(folder, fix="pass --dir DIR outside the run folder")
        return export_wandb(records, project, folder)
    raise BenchregError(f"unknown export target {destination.target!r}", fix="mlflow or wandb")
