"""Hydra callback: after a multirun, stop the launcher's worker pool, write summary.csv /
summary.md, run the analyses, print the summary table on the terminal and write the report
(HTML + figures + markdown, `benchreg.app.report`)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from loguru import logger
from omegaconf import DictConfig

from benchreg.app.sweepfolder import job_states
from benchreg.core.analysis import read_jobs, run_analyses, write_reports
from benchreg.core.io import atomic_write_text, read_json
from benchreg.core.runfolder import ERROR_FILE, METRICS_FILE
from benchreg.core.summary import summary_csv, summary_markdown, summary_row


def sweep_rows(sweep_dir: Path) -> list[dict[str, Any]]:
    """One summary row per job: finished, failed, started but unfinished, or never started."""
    rows = []
    for job in job_states(sweep_dir):
        if job.state == "ok" and job.folder is not None:
            metrics = read_json(job.folder / METRICS_FILE)
            rows.append(summary_row(job.name, metrics, None))
        elif job.state == "failed" and job.folder is not None:
            error = read_json(job.folder / ERROR_FILE)
            rows.append(summary_row(job.name, None, error))
        else:
            rows.append(summary_row(job.name, None, {"error": job.state}, status=job.state))
    return rows


def summarize_sweep(sweep_dir: Path) -> tuple[list[dict[str, Any]], list[Path], int]:
    """Write the summary files and analyses; returns the summary rows, the files written and
    how many analyses failed."""
    rows = sweep_rows(sweep_dir)
    reports = run_analyses(read_jobs(sweep_dir))
    extra = "".join(f"\n## {r.name}\n\n{r.markdown.strip()}\n" for r in reports)
    atomic_write_text(sweep_dir / "summary.csv", summary_csv(rows))
    atomic_write_text(sweep_dir / "summary.md", summary_markdown(rows) + extra)
    written = [sweep_dir / "summary.csv", sweep_dir / "summary.md"]
    failed_analyses = sum(1 for r in reports if r.error)
    return rows, [*written, *write_reports(sweep_dir, reports)], failed_analyses


def report_sweep(sweep_dir: Path) -> int:
    """Summarize a sweep on disk and the terminal; returns the number of jobs that did not
    finish well plus the number of analyses that failed (either makes the exit code 2)."""
    rows, written, failed_analyses = summarize_sweep(sweep_dir)
    print(summary_markdown(rows))
    for path in written:
        logger.info(f"wrote {path}")
    if failed_analyses:
        logger.error(f"{failed_analyses} analysis(es) failed; see summary.md")
    return sum(1 for row in rows if row.get("status") != "ok") + failed_analyses


def not_ok_jobs(sweep_dir: Path) -> int:
    return sum(1 for job in job_states(sweep_dir) if job.state != "ok")


def write_sweep_report(sweep_dir: Path) -> None:
    """The HTML/markdown report with figures (`benchreg report`); a failure here is logged and
    never changes the sweep's summary or exit code."""
    try:
        from benchreg.app.report import write_report

        result = write_report(sweep_dir)
        logger.info(f"wrote {result.html if result.html else result.markdown}")
        for note in result.notes:
            logger.warning(note)
    except Exception as exc:
        logger.error(
            f"sweep report failed (the jobs' results are unaffected): {type(exc).__name__}: {exc}"
        )


SWEEP_RESULT: dict[str, int] = {}  # read by `benchreg.app.main` for the exit code


def stop_pool_workers() -> None:
    """Shut down joblib's reusable loky worker pool and its resource tracker, when this process
    started them (`hydra/launcher=joblib`), so that no worker outlives the sweep."""
    reusable = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(reusable, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=True)
        reusable._executor = None  # type: ignore[union-attr]
    tracker = sys.modules.get("joblib.externals.loky.backend.resource_tracker")
    stop = getattr(getattr(tracker, "_resource_tracker", None), "_stop", None)
    if stop is not None:
        stop()


class SweepSummary(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            stop_pool_workers()
        except Exception as exc:  # never let the clean-up hide the results
            logger.warning(f"could not stop the launcher's worker pool: {exc}")
        sweep_dir = Path(config.hydra.sweep.dir)
        if not sweep_dir.is_dir():
            return
        try:
            SWEEP_RESULT["not_ok"] = report_sweep(sweep_dir)
        except Exception as exc:  # a broken analysis must not hide the jobs' own outputs
            SWEEP_RESULT["not_ok"] = SWEEP_RESULT.get("not_ok", 0) or 1
            logger.error(f"sweep summary failed: {type(exc).__name__}: {exc}")
            # the job states alone, so that the exit code still counts the failed jobs
            with contextlib.suppress(Exception):
                SWEEP_RESULT["not_ok"] = max(1, not_ok_jobs(sweep_dir))
        write_sweep_report(sweep_dir)
