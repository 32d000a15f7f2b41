"""One finished run folder read for the leaderboard: its metrics.json and provenance.json, shape
checked as the sweep tools check them (:func:`benchreg.core.analysis.check_metrics`), and what
the table needs of them: the state of its primary value, its data and its finish time.

Reading is the cost at 10,000 folders, so only these two small files are read (samples.jsonl
only later, for the cells a `--ref` test needs); a damaged file is a :class:`Skipped` naming it,
never a stop."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchreg.core.analysis import (
    PROVENANCE_FILE,
    JobRecord,
    check_metrics,
    check_provenance,
    read_checked,
)
from benchreg.core.errors import BenchregError
from benchreg.core.runfolder import METRICS_FILE
from benchreg.core.summary import result_state


@dataclass(frozen=True, slots=True)
class Run:
    """A finished run as the table uses it."""

    job: JobRecord
    data: Mapping[str, str]  # data file -> sha256, as metrics.json recorded them
    finished: str  # ISO time provenance.json was written (the run's end); sortable
    finished_ns: int  # metrics.json's modification time: orders runs of the same second
    state: str  # RESULT or one of the words above
    why: str  # what makes a run no result (empty for a result)

    @property
    def data_digest(self) -> str:
        """12 hex digits naming the run's data files and their bytes together."""
        joined = "\n".join(f"{name}\t{sha}" for name, sha in sorted(self.data.items()))
        return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:12]

    @property
    def primary(self) -> dict[str, Any]:
        metrics = self.job.metrics
        return dict(metrics["metrics"][metrics["primary"]])


@dataclass(frozen=True, slots=True)
class Skipped:
    """A run folder that could not be read: the one warning line to print."""

    warning: str


def read_run(folder: Path) -> Run | Skipped:
    """``folder``'s run, or why it is skipped (the damaged file, what is wrong, how to fix)."""
    try:
        metrics = read_checked(folder / METRICS_FILE, check_metrics)
        provenance_path = folder / PROVENANCE_FILE
        provenance = (
            read_checked(provenance_path, check_provenance) if provenance_path.is_file() else {}
        )
        finished_ns = (folder / METRICS_FILE).stat().st_mtime_ns
    except BenchregError as exc:
        return Skipped(f"skipped a damaged run: {exc.message}")
    except OSError as exc:
        return Skipped(f"skipped a run that cannot be read: {folder}: {exc.strerror}")
    job = JobRecord(folder, metrics, _what_is_used(provenance))
    state, why = result_state(metrics)
    created = provenance.get("created")
    return Run(
        job=job,
        data=dict((metrics.get("sha256") or {}).get("data") or {}),
        finished=created if isinstance(created, str) else "",
        finished_ns=finished_ns,
        state=state,
        why=why,
    )


def _what_is_used(provenance: Mapping[str, Any]) -> dict[str, Any]:
    """What the table reads of provenance.json (the model's label, the data root, the finish
    time): the rest (task spec, environment, config) is most of a run's memory at 10,000 runs."""
    model = (provenance.get("config") or {}).get("model")
    kept = {key: provenance[key] for key in ("created", "data_root") if key in provenance}
    return {**kept, "config": {"model": model}} if model is not None else kept
