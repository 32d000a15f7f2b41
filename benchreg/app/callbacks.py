"""Hydra callback: after a multirun, write summary.csv / summary.md, run the analyses and print
the summary table on the terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from loguru import logger
from omegaconf import DictConfig

from benchreg.app.sweepfolder import job_states
from benchreg.core.analysis import read_jobs, run_analyses, write_reports
from benchreg.core.io import atomic_write_text
from benchreg.core.report import summary_csv, summary_markdown, summary_row
from benchreg.core.runfolder import ERROR_FILE, METRICS_FILE


def sweep_rows(sweep_dir: Path) -> list[dict[str, Any]]:
    """One summary row per job: finished, failed, started but unfinished, or never started."""
    rows = []
    for job in job_states(sweep_dir):
        if job.state == "ok" and job.folder is not None:
            metrics = json.loads((job.folder / METRICS_FILE).read_text("utf-8"))
            rows.append(summary_row(job.name, metrics, None))
        elif job.state == "failed" and job.folder is not None:
            error = json.loads((job.folder / ERROR_FILE).read_text("utf-8"))
            rows.append(summary_row(job.name, None, error))
        else:
            rows.append(summary_row(job.name, None, {"error": job.state}, status=job.state))
    return rows


def summarize_sweep(sweep_dir: Path) -> tuple[list[dict[str, Any]], list[Path]]:
    """Write the summary files and analyses; returns the summary rows and the files written."""
    rows = sweep_rows(sweep_dir)
    reports = run_analyses(read_jobs(sweep_dir))
    extra = "".join(f"\n## {r.name}\n\n{r.markdown.strip()}\n" for r in reports)
    atomic_write_text(sweep_dir / "summary.csv", summary_csv(rows))
    atomic_write_text(sweep_dir / "summary.md", summary_markdown(rows) + extra)
    written = [sweep_dir / "summary.csv", sweep_dir / "summary.md"]
    return rows, [*written, *write_reports(sweep_dir, reports)]


def report_sweep(sweep_dir: Path) -> int:
    """Summarize a sweep on disk and the terminal; returns the number of failed jobs."""
    rows, written = summarize_sweep(sweep_dir)
    print(summary_markdown(rows))
    for path in written:
        logger.info(f"wrote {path}")
    return sum(1 for row in rows if row.get("status") != "ok")


SWEEP_RESULT: dict[str, int] = {}  # read by `benchreg.app.main` for the exit code


class SweepSummary(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        if not sweep_dir.is_dir():
            return
        try:
            SWEEP_RESULT["not_ok"] = report_sweep(sweep_dir)
        except Exception as exc:  # a broken analysis must not hide the jobs' own outputs
            SWEEP_RESULT["not_ok"] = SWEEP_RESULT.get("not_ok", 0) or 1
            logger.error(f"sweep summary failed: {type(exc).__name__}: {exc}")
