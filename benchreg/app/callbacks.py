"""Hydra callbacks.

:class:`SweepSummary`: after a multirun, stop the launcher's worker pool, write summary.csv /
summary.md, run the analyses, write the report (HTML + figures + markdown + the sample browser,
`benchreg.app.report`) and end on the terminal with what answers the sweep: each family's
headline table, then the job states and where the report is. The per-job summary table (and each
job's full table while the sweep runs) is printed with ``BENCHREG_VERBOSE=1``; summary.md always
holds it. :class:`RedactedHydraFiles`: Hydra's `.hydra/` copies of a job's config, redacted."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from loguru import logger
from omegaconf import DictConfig, OmegaConf

from benchreg.app import logs
from benchreg.app.sweepfolder import job_states, redacted, save_yaml
from benchreg.core.analysis import read_jobs, run_analyses, samples_shared, write_reports
from benchreg.core.io import atomic_write_text, read_json
from benchreg.core.load import forget, gc_paused
from benchreg.core.runfolder import ERROR_FILE, METRICS_FILE
from benchreg.core.summary import plural, state_lines, summary_csv, summary_markdown, summary_row

REDONE_BY_THE_SAME_SWEEP = ("failed", "damaged", "unfinished", "not started")
REDO_NOTE = (
    "the same sweep command runs these jobs again (finished jobs are kept); add run.overwrite=true "
    "where a job's folder holds a run of other inputs"
)


def sweep_rows(sweep_dir: Path) -> list[dict[str, Any]]:
    """One summary row per job: finished, failed, damaged (its metrics.json), started but
    unfinished, or never started."""
    rows = []
    for job in job_states(sweep_dir):
        if job.state in ("ok", "incomplete") and job.folder is not None:
            metrics = read_json(job.folder / METRICS_FILE)
            rows.append(summary_row(job.name, metrics, None, answered=True))
        elif job.state == "failed" and job.folder is not None:
            error = read_json(job.folder / ERROR_FILE)
            rows.append(summary_row(job.name, None, error))
        elif job.state == "damaged":  # the same sweep again resumes it and writes it again
            rows.append(summary_row(job.name, None, {"error": job.detail}, status=job.state))
        else:
            rows.append(summary_row(job.name, None, {"error": job.state}, status=job.state))
    return rows


def summarize_sweep(sweep_dir: Path) -> tuple[list[dict[str, Any]], list[Path], int]:
    """Write the summary files and analyses; returns the summary rows, the files written and
    how many analyses failed."""
    rows = sweep_rows(sweep_dir)
    reports = run_analyses(read_jobs(sweep_dir))
    extra = "".join(f"\n## {r.name}\n\n{r.markdown.strip()}\n" for r in reports)
    # made again from the job folders by `benchreg analyze`: renamed into place, no fsync
    atomic_write_text(sweep_dir / "summary.csv", summary_csv(rows), durable=False)
    text = summary_markdown(rows, answered=True) + extra
    atomic_write_text(sweep_dir / "summary.md", text, durable=False)
    written = [sweep_dir / "summary.csv", sweep_dir / "summary.md"]
    failed_analyses = sum(1 for r in reports if r.error)
    return rows, [*written, *write_reports(sweep_dir, reports)], failed_analyses


def report_sweep(sweep_dir: Path) -> int:
    """Summarize a sweep on disk and the terminal (`benchreg analyze`); returns the number of
    jobs that did not finish well plus the number of analyses that failed (either makes the
    exit code 2)."""
    rows, written, failed_analyses = summarize_sweep(sweep_dir)
    print_sweep_end(sweep_dir, rows, written, failed_analyses)
    return not_ok_count(rows, failed_analyses)


def not_ok_count(rows: list[dict[str, Any]], failed_analyses: int) -> int:
    return sum(1 for row in rows if row.get("status") != "ok") + failed_analyses


def print_sweep_end(
    sweep_dir: Path,
    rows: list[dict[str, Any]],
    written: list[Path],
    failed_analyses: int,
    report: Any = None,
) -> None:
    """The end of a sweep on the terminal: (verbose: the per-job table and the files written)
    each family's headline, the job states with every job that did not finish well, and where
    the summary, report and sample browser are. ``report``: the
    :class:`benchreg.app.report.ReportResult` just written (else the headlines are read from
    the sweep's files)."""
    from benchreg.app.report import headline as headline_view

    if logs.verbose():
        print(summary_markdown(rows, answered=True))
        for path in written:
            logger.info(f"wrote {path}")
    headlines = report.headlines if report is not None else _headlines(sweep_dir)
    width = headline_view.terminal_width()
    for _, made in headlines:
        print(headline_view.text(made, width))
        print()
    for line in state_lines(rows):
        print(line)
    for row in rows:
        if row.get("status") != "ok":
            error = row.get("error")
            said = f": {error}" if error and error != row["status"] else ""
            print(f"  {row['job']}: {row['status']}{said}")
    if any(row.get("status") in REDONE_BY_THE_SAME_SWEEP for row in rows):
        print(REDO_NOTE)
    if failed_analyses:
        logger.error(f"{plural(failed_analyses, 'analysis', 'analyses')} failed; see summary.md")
    print(f"summary: {sweep_dir / 'summary.md'}  (every job; BENCHREG_VERBOSE=1 prints it here)")
    if report is not None:
        print(f"report:  {report.html}")
        if report.samples is not None:
            print(f"samples: {report.samples}")
    note = logs.repeats_note()
    if note:
        logger.bind(repeat=True).info(note)


def _headlines(sweep_dir: Path) -> list[Any]:
    """The headlines of a sweep on disk; a sweep the report cannot read has none (the summary
    said what there is)."""
    try:
        from benchreg.app.report import sweep_headlines

        found, notes = sweep_headlines(sweep_dir)
    except Exception as exc:
        logger.warning(f"no headline: {type(exc).__name__}: {exc}")
        return []
    for note in notes:
        logger.warning(note)
    return found


def not_ok_jobs(sweep_dir: Path) -> int:
    return sum(1 for job in job_states(sweep_dir) if job.state != "ok")


def write_sweep_report(sweep_dir: Path) -> Any:
    """The HTML/markdown report with figures and the sample browser (`benchreg report`), or
    None; a failure here is logged and never changes the sweep's summary or exit code."""
    try:
        from benchreg.app.report import write_report

        result = write_report(sweep_dir)
        for note in result.notes:
            logger.warning(note)
        return result
    except Exception as exc:
        logger.error(
            f"sweep report failed (the jobs' results are unaffected): {type(exc).__name__}: {exc}"
        )
        return None


SWEEP_RESULT: dict[str, int] = {}  # read by `benchreg.app.main` for the exit code


def stop_pool_workers() -> None:
    """Shut down joblib's reusable loky worker pool and its resource tracker, when this process
    started them (`hydra/launcher=joblib`), so that no worker outlives the sweep."""
    reusable = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(reusable, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=True)
        release_temp_folders(getattr(executor, "_temp_folder_manager", None))
    release_semaphores()
    tracker = sys.modules.get("joblib.externals.loky.backend.resource_tracker")
    stop = getattr(getattr(tracker, "_resource_tracker", None), "_stop", None)
    if stop is not None:
        stop()


def release_semaphores() -> None:
    """Run now the finalizers of loky's named semaphores. Left to interpreter exit they run
    after the tracker is stopped, start a new tracker that knows none of them, and it prints a
    `KeyError: '/loky-...'` traceback per semaphore. Unlinking a name leaves open handles usable."""
    from multiprocessing import util

    synchronize = sys.modules.get("joblib.externals.loky.backend.synchronize")
    cleanup = getattr(getattr(synchronize, "SemLock", None), "_cleanup", None)
    registry = getattr(util, "_finalizer_registry", None)
    if cleanup is None or not isinstance(registry, dict):
        return
    for finalizer in list(registry.values()):
        if getattr(finalizer, "_callback", None) is cleanup:
            with contextlib.suppress(Exception):
                finalizer()


def release_temp_folders(manager: Any) -> None:
    """Run now the clean-up joblib would run at exit for its memmapping folders: each is
    registered with the resource tracker even when never created, and unregistered only by that
    exit hook. Run after the tracker is stopped, the hook starts a new tracker that knows no such
    folder (a `KeyError: '/dev/shm/joblib_memmapping_folder_...'` traceback at exit), while the
    stopped one reports the folder as leaked (a `UserWarning: resource_tracker: ... leaked`).
    Neither is about the user's sweep."""
    import atexit

    finalizers = getattr(manager, "_finalizers", None)
    if not isinstance(finalizers, dict):
        return
    for context_id, finalizer in list(finalizers.items()):
        with contextlib.suppress(Exception):
            finalizer()  # deletes the folder if it exists, unregisters it from the tracker
        atexit.unregister(finalizer)
        finalizers.pop(context_id, None)


class SweepSummary(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        with samples_shared():  # the analyses and the sample browser read the same rows
            self._summarize(config)

    def _summarize(self, config: DictConfig) -> None:
        try:
            stop_pool_workers()
        except Exception as exc:  # never let the clean-up hide the results
            logger.warning(f"could not stop the launcher's worker pool: {exc}")
        sweep_dir = Path(config.hydra.sweep.dir)
        if not sweep_dir.is_dir():
            return
        logs.end_sharing(sweep_dir)
        forget()  # the jobs' data, before the summary and report read the outputs
        with gc_paused():  # the jobs' sample rows, decoded back: no cycles, a growing heap
            self._write(sweep_dir)

    def _write(self, sweep_dir: Path) -> None:
        try:
            rows, written, failed_analyses = summarize_sweep(sweep_dir)
            SWEEP_RESULT["not_ok"] = not_ok_count(rows, failed_analyses)
        except Exception as exc:  # a broken analysis must not hide the jobs' own outputs
            SWEEP_RESULT["not_ok"] = SWEEP_RESULT.get("not_ok", 0) or 1
            logger.error(f"sweep summary failed: {type(exc).__name__}: {exc}")
            # the job states alone, so that the exit code still counts the failed jobs
            with contextlib.suppress(Exception):
                SWEEP_RESULT["not_ok"] = max(1, not_ok_jobs(sweep_dir))
            write_sweep_report(sweep_dir)
            return
        report = write_sweep_report(sweep_dir)
        try:
            print_sweep_end(sweep_dir, rows, written, failed_analyses, report)
        except Exception as exc:  # the files are written: say where, never a traceback
            logger.error(
                f"could not print the sweep's end ({type(exc).__name__}: {exc}); its summary: "
                f"{sweep_dir / 'summary.md'}"
            )


class RedactedHydraFiles(Callback):
    """``hydra.output_subdir`` (null in benchreg's config; a user may set it, e.g. `.hydra`):
    Hydra writes its copies of a job's config there (``config.yaml``, ``hydra.yaml``,
    ``overrides.yaml``) just before it calls ``on_job_start``, which writes them again with
    every secret redacted, before the job runs. Secrets are not config values (keys come from
    environment variables the config names; one typed on the command line is refused before
    Hydra starts): this catches one that a config file of the user's own carries."""

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        subdir = config.hydra.output_subdir
        if subdir is None:
            return
        folder = Path(str(config.hydra.runtime.output_dir)) / str(subdir)
        plain = OmegaConf.to_container(config, resolve=False)
        assert isinstance(plain, dict)
        hydra = plain.pop("hydra")
        save_yaml(redacted(plain), folder / "config.yaml")
        save_yaml(redacted({"hydra": hydra}), folder / "hydra.yaml")
        save_yaml(redacted(hydra["overrides"]["task"]), folder / "overrides.yaml")
