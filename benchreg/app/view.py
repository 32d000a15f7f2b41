"""`python -m benchreg view <sweep or run folder>`: write the sample browser
(:mod:`benchreg.app.report.samples`) and print its path.

A sweep's page goes to `<sweep>/report/samples.html` (where the report links it); a single
run's to `<run folder>.samples.html` beside the folder (a run folder holds only the files a run
writes, so that it can be resumed or replaced). A `mode=prompts` folder's page lists its rendered
prompts. Every file read is checked first, as for the
report: a damaged one is one located error and nothing is written.
"""

from __future__ import annotations

import webbrowser
from pathlib import Path

from benchreg.app.modes import VALIDATION_FILE
from benchreg.app.report import REPORT_DIR, read_sweep, write_sweep_browser
from benchreg.app.report.samples import (
    PAGE,
    PROMPTS_FILE,
    SAMPLES_PAGE,
    BrowserJob,
    write_browser,
)
from benchreg.core.analysis import DamagedFileError, read_job
from benchreg.core.errors import BenchregError
from benchreg.core.reader import json_lines
from benchreg.core.runfolder import METRICS_FILE, RUN_FILE, refuse_inside_run_folder
from benchreg.core.summary import is_incomplete


def run_page(folder: Path) -> Path:
    """Where a single run's page goes: beside its folder."""
    return folder.parent / f"{folder.name}.{SAMPLES_PAGE}"


def write_view(folder: Path, out: Path | None = None) -> Path:
    """Write the sample browser of ``folder`` (a sweep or a finished run); returns its path."""
    folder = Path(folder)
    if out is not None:
        check_out(Path(out))
    if not folder.is_dir():
        raise BenchregError(
            "no such folder" if not folder.exists() else "a file, not a folder",
            where=folder,
            fix="pass a sweep folder (hydra.sweep.dir of a -m run) or a run folder",
        )
    if (folder / METRICS_FILE).is_file():
        job = read_job(folder)
        record = job.metrics
        target = out or run_page(folder)
        page = BrowserJob(
            name=folder.name,
            state="incomplete" if is_incomplete(record) else "ok",
            task=str(record.get("task") or ""),
            view=record.get("view"),
            model=str(record.get("model") or ""),
            rows=job.samples,
            folder=folder,
        )
        return write_browser(target, [page], f"benchreg samples: {folder.name}")
    if (folder / PROMPTS_FILE).is_file():  # mode=prompts: the messages, nothing answered yet
        rows = [
            {"id": row.get("id"), "status": "prompt", "messages": row.get("messages")}
            for _, row, _ in json_lines(folder / PROMPTS_FILE)
            if isinstance(row, dict)
        ]
        page = BrowserJob(name=folder.name, state="prompts", rows=rows, folder=None)
        return write_browser(out or run_page(folder), [page], f"benchreg prompts: {folder.name}")
    if (folder / RUN_FILE).is_file():
        raise BenchregError(
            "the run has not finished (no metrics.json, no samples.jsonl yet)",
            where=folder,
            fix="run the same command again to finish it, then view it",
        )
    if (folder / VALIDATION_FILE).is_file():
        raise BenchregError(
            "a mode=validate folder: no samples, its findings are in validation.json",
            where=folder,
            fix="pass a sweep folder or a run folder",
        )
    try:
        jobs = read_sweep(folder)  # a damaged file is one located error
    except DamagedFileError:
        raise
    except BenchregError as exc:
        raise BenchregError(
            f"{exc.what}, nor a finished run (no metrics.json)",
            where=folder,
            fix="pass a sweep folder (the hydra.sweep.dir of a -m run) or a run folder",
        ) from None
    target = out or folder / REPORT_DIR / SAMPLES_PAGE
    report = target.parent / "index.html"
    back = "index.html" if report.is_file() else None
    return write_sweep_browser(folder, jobs, target, back=back)


def check_out(out: Path) -> None:
    """``--out`` is refused inside a run folder (it holds only the run's own files) and onto an
    existing file that is not a page `view` wrote: nothing else is ever replaced by the page."""
    refuse_inside_run_folder(
        out,
        fix="pass --out FILE outside the run folder, or leave it out (the page goes beside the "
        "folder)",
    )
    where = out.resolve()
    if where.is_dir():
        raise BenchregError("--out is a folder", where=out, fix="pass --out FILE (a file name)")
    if where.exists() and not _is_view_page(where):
        raise BenchregError(
            "--out is an existing file that `view` did not write; it is not replaced",
            where=out,
            fix="pass --out a new file name (or a page an earlier `view` wrote)",
        )


def _is_view_page(path: Path) -> bool:
    """True when ``path`` begins as every page of :func:`write_browser` does."""
    head = PAGE.partition("__TITLE__")[0].encode("utf-8")
    try:
        with path.open("rb") as handle:
            return handle.read(len(head)) == head
    except OSError:
        return False


def view(folder: Path, out: Path | None = None, *, open_it: bool = False) -> int:
    try:
        path = write_view(folder, out)
    except OSError as exc:
        raise BenchregError(
            f"cannot write the page ({exc.strerror or type(exc).__name__})",
            where=exc.filename or out or folder,
            fix="pass --out FILE, a file you can write",
        ) from None
    print(path)
    if open_it:
        webbrowser.open(path.resolve().as_uri())
    return 0
