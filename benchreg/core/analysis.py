"""Cross-run analyses: read the job folders of a sweep and compare runs (views, conditions).

An analysis is registered by name (`registry.analyses`) as ``fn(jobs, **params) -> AnalysisReport``
and named in a task entry's `analyses`. `python -m benchreg analyze <sweep_dir>` groups the sweep's
jobs by the analyses their tasks name and writes each report as markdown + JSON.

Models are told apart by their identity (`metrics.json` `model_id`: the predictions file's sha256,
the baseline and its params, the server, model and generation settings), never by the display name
alone: two predictions files both called `results.json` are two models. Analyses group jobs with
:func:`system_labels` and index them with :func:`unique_jobs`, which makes two jobs of the same
model, data root, task and view in one sweep a named error (:class:`DuplicateJobError`) instead of
a silent overwrite. :func:`run_analyses` turns such an error into a failed report (its `error`),
so the sweep summary still gets written and says which analysis failed and why.

The sweep tools (`analyze`, `report`, `compare`) read a sweep through :func:`check_sweep`: it
refuses a folder that is no sweep (:func:`check_sweep_folder`: missing, a file, a run folder, an
empty folder, a folder of sweeps) and checks the shape of every file they read (sweep.json,
metrics.json, provenance.json, samples.jsonl against the sha256 its metrics.json recorded,
error.json, analysis_*.json), so that a damaged file is one located :class:`DamagedFileError`
(what, file:line, how to fix) before anything is written. A run whose metrics.json says
`complete: false` is no result: :func:`read_jobs` leaves it out of the analyses.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson
from loguru import logger

from benchreg.core.errors import BenchregError, at
from benchreg.core.runfolder import ERROR_FILE, METRICS_FILE, RUN_FILE

PREDICTIONS_IDENTITY = "predictions:"  # identities of predictions files start so


@dataclass
class JobRecord:
    """One finished job of a sweep, as written to its folder."""

    dir: Path
    metrics: dict[str, Any]  # metrics.json
    provenance: dict[str, Any]  # provenance.json

    @property
    def task(self) -> str:
        return str(self.metrics["task"])

    @property
    def family(self) -> str:
        return str(self.metrics["family"])

    @property
    def view(self) -> str | None:
        return self.metrics.get("view")

    @property
    def model(self) -> str:
        """The display name (`model.label` when one was given)."""
        return str(self.metrics["model"])

    @property
    def model_id(self) -> str:
        """The system's identity; run folders written before identities existed fall back to the
        display name."""
        return str(self.metrics.get("model_id") or self.metrics["model"])

    @property
    def label(self) -> str | None:
        """The user's `model.label`, when the run had one (from the config in provenance.json)."""
        model = (self.provenance.get("config") or {}).get("model") or {}
        label = model.get("label") if isinstance(model, dict) else None
        return str(label) if label else None

    @property
    def group(self) -> str:
        """The model an analysis puts this job with: its identity; for a predictions file that
        the user labelled (`model.label=`), the label, because one model's predictions for
        several views or tasks are several files (several identities) that only the user can tie
        together. Two jobs of one group, task and view are still an error (:func:`unique_jobs`)."""
        if self.label and self.model_id.startswith(PREDICTIONS_IDENTITY):
            return f"label:{self.label}"
        return self.model_id

    @property
    def data_root(self) -> str:
        return str(self.provenance.get("data_root") or self.metrics.get("data_root") or "")

    @property
    def system_key(self) -> tuple[str, str]:
        """What an analysis groups by: (model group, data root)."""
        return (self.group, self.data_root)

    @property
    def task_spec(self) -> dict[str, Any]:
        return dict(self.provenance.get("task_spec") or {})

    @property
    def complete(self) -> bool:
        """False when the run's failed requests make it no result (`complete: false` in its
        metrics.json); run folders written before the key existed are complete."""
        return self.metrics.get("complete") is not False

    @cached_property
    def samples(self) -> list[dict[str, Any]]:
        """Rows of samples.jsonl: id, raw_output, answer, gold, status, score, ... (a damaged
        line is a :class:`DamagedFileError` with its file:line)."""
        path = self.dir / SAMPLES_FILE
        verified = _verified_rows(path, (self.metrics.get("sha256") or {}).get(SAMPLES_FILE))
        return verified if verified is not None else list(_sample_rows(path))


@dataclass(slots=True)
class AnalysisReport:
    name: str
    markdown: str
    data: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # extra files to write, name -> text
    error: str | None = None  # set when the analysis failed (the markdown then says why)


class DuplicateJobError(BenchregError):
    """Two jobs of one sweep have the same model identity, data root, task and view: an analysis
    cannot tell which one to use."""


def read_jobs(sweep_dir: Path, *, incomplete: bool = False, full: bool = False) -> list[JobRecord]:
    """The finished jobs of ``sweep_dir`` (its job folders with a metrics.json and no error.json),
    each file checked (:func:`read_job`; ``full``: every key the report and compare read, else
    what an analysis reads): a damaged one is a :class:`DamagedFileError` naming it. A run whose
    metrics.json says `complete: false` (failed requests not asked again yet) is no result and
    left out, unless ``incomplete``."""
    jobs = []
    for folder in job_folders(sweep_dir):
        if (folder / ERROR_FILE).is_file() or not (folder / METRICS_FILE).is_file():
            continue  # failed (its folder may hold an earlier run's files), or not finished
        job = read_job(folder, full=full)
        if incomplete or job.complete:
            jobs.append(job)
    return jobs


def run_analyses(jobs: list[JobRecord]) -> list[AnalysisReport]:
    """Run every analysis that the jobs' task entries name, each over the jobs that name it."""
    from benchreg.core import registry

    wanted: dict[str, tuple[dict[str, Any], list[JobRecord]]] = {}
    for job in jobs:
        for ref in job.task_spec.get("analyses", []):
            key = json.dumps(ref, sort_keys=True)
            wanted.setdefault(key, (ref, []))[1].append(job)
    reports = []
    for ref, selected in wanted.values():
        fn = registry.analyses.get(ref["name"])
        try:
            reports.append(fn(selected, **ref.get("params", {})))
        except BenchregError as exc:
            name = str(ref["name"])
            message = exc.message.removeprefix(f"analysis {name}: ")
            logger.error(f"analysis {name} failed: {message}")
            reports.append(failed_report(name, message))
    return reports


def failed_report(name: str, message: str) -> AnalysisReport:
    """The report of an analysis that could not run: the error instead of a table."""
    markdown = f"**Analysis `{name}` failed**: {message}\n\nNo result of this analysis is given.\n"
    return AnalysisReport(name, markdown, {"error": message}, error=message)


def write_reports(out_dir: Path, reports: list[AnalysisReport]) -> list[Path]:
    from benchreg.core.io import atomic_write_json, atomic_write_text

    written = []
    for report in reports:
        md, js = out_dir / f"analysis_{report.name}.md", out_dir / f"analysis_{report.name}.json"
        # made again from the job folders (`benchreg analyze`): renamed into place, no fsync
        atomic_write_text(md, report.markdown, durable=False)
        atomic_write_json(js, report.data, durable=False)
        written += [md, js]
        for name, text in report.files.items():
            atomic_write_text(out_dir / name, text, durable=False)
            written.append(out_dir / name)
    return written


# --- the files of a sweep: what `analyze`, `report` and `compare` read, checked ------------------

SWEEP_FILE = "sweep.json"  # the planned jobs (benchreg.app.sweepfolder)
SAMPLES_FILE = "samples.jsonl"
PROVENANCE_FILE = "provenance.json"
ANALYSIS_GLOB = "analysis_*.json"
# folders of a sweep dir that are no job: `benchreg report` and `benchreg compare` outputs
NOT_JOB_FOLDERS = frozenset({"report", "compare"})
# files that make a folder a run folder (a single run, or one job of a sweep)
RUN_FOLDER_FILES = (METRICS_FILE, RUN_FILE, SAMPLES_FILE, "journal.jsonl")
SWEEP_HINT = (
    "pass a sweep folder: the hydra.sweep.dir of a `-m` run, which holds sweep.json and one "
    "folder per job"
)


class DamagedFileError(BenchregError):
    """A file of a sweep that is not as benchreg wrote it (cut, edited, or of another shape)."""


def job_folders(sweep_dir: Path) -> list[Path]:
    """The sweep's job folders: its sub-folders but hidden ones (a launcher's `.submitit/`) and
    the `report/` and `compare/` outputs, in name order."""
    try:
        children = sorted(sweep_dir.iterdir())
    except OSError:
        return []
    return [
        p
        for p in children
        if p.is_dir() and not p.name.startswith(".") and p.name not in NOT_JOB_FOLDERS
    ]


def _is_job_folder(folder: Path) -> bool:
    return (folder / METRICS_FILE).is_file() or (folder / ERROR_FILE).is_file()


def is_sweep_folder(path: Path) -> bool:
    """A folder holding `sweep.json`, or job sub-folders with a metrics.json (or error.json)."""
    if not path.is_dir() or any((path / name).exists() for name in RUN_FOLDER_FILES):
        return False
    return (path / SWEEP_FILE).exists() or any(_is_job_folder(f) for f in job_folders(path))


def check_sweep_folder(path: Path) -> None:
    """Refuse, with one line saying why, what is not a sweep folder: a path that does not exist,
    a file, a single run's folder, an empty folder, a folder of sweeps, any other folder."""
    if not path.exists():
        raise BenchregError("no such folder", where=path, fix=SWEEP_HINT)
    if not path.is_dir():
        raise BenchregError("a file, not a sweep folder", where=path, fix=SWEEP_HINT)
    try:
        children = list(path.iterdir())
    except OSError as exc:
        raise BenchregError(
            f"cannot read the folder ({exc.strerror})", where=path, fix=SWEEP_HINT
        ) from None
    held = [name for name in RUN_FOLDER_FILES if (path / name).exists()]
    if held:
        parent = path.resolve().parent
        job_of_sweep = (parent / SWEEP_FILE).is_file() or (
            path.name.split("_", 1)[0].isdigit() and is_sweep_folder(parent)
        )  # a job folder (`<num>_...`), not a single run among others
        where_to = f"its sweep folder, {parent}" if job_of_sweep else "a sweep folder"
        raise BenchregError(
            f"a run folder (it holds {', '.join(held)}), not a sweep folder",
            where=path,
            fix=f"pass {where_to}; a single run's results are its {METRICS_FILE}",
        )
    if (path / SWEEP_FILE).exists() or any(_is_job_folder(f) for f in job_folders(path)):
        return
    sweeps = sorted(f.name for f in job_folders(path) if is_sweep_folder(f))
    if sweeps:
        shown = ", ".join(sweeps[:3]) + (", ..." if len(sweeps) > 3 else "")
        raise BenchregError(
            f"a folder of {len(sweeps)} sweep folder(s) ({shown}), not one sweep",
            where=path,
            fix=f"pass one of them, e.g. {path / sweeps[-1]}",
        )
    what = (
        "an empty folder" if not children else "no sweep.json and no job folder with metrics.json"
    )
    raise BenchregError(f"not a sweep folder: {what}", where=path, fix=SWEEP_HINT)


def _job_fix(path: Path) -> str:
    folder = path.parent.name
    return (
        f"restore the file, or remove the job folder {folder} and run the same sweep again to "
        "redo that job"
    )


def _fix_for(path: Path) -> str:
    if path.name == SWEEP_FILE:
        return (
            "restore it, or delete it: the job folders are read without it (jobs never started "
            "are then not listed)"
        )
    if path.name.startswith("analysis_"):
        return f"delete it; `python -m benchreg analyze {path.parent}` writes it again"
    return _job_fix(path)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _line_of(text: str, keys: tuple[str, ...]) -> int | None:
    """The line of ``keys`` (a path of object keys) in pretty-printed JSON text."""
    pos = 0
    for key in keys:
        found = text.find(json.dumps(key, ensure_ascii=False) + ":", pos)
        if found < 0:
            return None
        pos = found
    return text.count("\n", 0, pos) + 1 if keys else None


class _Shape:
    """Checks of one JSON file's shape; a failure names the key path, the file and its line."""

    def __init__(self, path: Path, text: str, line: int | None = None) -> None:
        self.path, self.text, self.line = path, text, line

    def fail(self, keys: tuple[str, ...], value: Any, expected: str) -> DamagedFileError:
        where = at(self.path, self.line if self.line is not None else _line_of(self.text, keys))
        name = ".".join(keys)
        holder = "the line" if self.line is not None else "the file"
        what = f"`{name}` is {_kind(value)}" if keys else f"{holder} holds {_kind(value)}"
        return DamagedFileError(
            f"{what}, expected {expected}", where=where, fix=_fix_for(self.path)
        )

    def obj(self, value: Any, keys: tuple[str, ...] = (), *, optional: bool = False) -> dict:
        if value is None and optional:
            return {}
        if not isinstance(value, dict):
            raise self.fail(keys, value, "a JSON object")
        return value

    def field(
        self,
        record: dict,
        key: str,
        kinds: tuple[type, ...],
        expected: str,
        *,
        keys: tuple[str, ...] = (),
        required: bool = False,
        null: bool = True,
    ) -> Any:
        path = (*keys, key)
        if key not in record:
            if required:
                raise DamagedFileError(
                    f"`{'.'.join(path)}` is missing",
                    where=at(self.path, self.line),
                    fix=_fix_for(self.path),
                )
            return None
        value = record[key]
        if value is None and null:
            return None
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if not ok:
            raise self.fail(path, value, expected)
        return value


NUMBER = (int, float)


def _load_json(path: Path) -> tuple[Any, str]:
    """A JSON file and its text; unreadable or malformed: a located :class:`DamagedFileError`."""
    from benchreg.core.io import read_text

    try:
        text = read_text(path)
    except BenchregError as exc:
        raise DamagedFileError(exc.what, where=exc.where, fix=_fix_for(path)) from None
    try:
        return orjson.loads(text), text
    except orjson.JSONDecodeError:
        pass  # json names the line and column, and reads the NaN older versions wrote
    try:
        return json.loads(text), text
    except json.JSONDecodeError as exc:
        raise DamagedFileError(
            f"malformed JSON ({exc.msg}, column {exc.colno})",
            where=at(path, exc.lineno),
            fix=_fix_for(path),
        ) from None
    except (ValueError, RecursionError) as exc:
        raise DamagedFileError(
            f"unreadable JSON ({type(exc).__name__})", where=path, fix=_fix_for(path)
        ) from None


def _check_metric(shape: _Shape, metric: Any, keys: tuple[str, ...]) -> None:
    metric = shape.obj(metric, keys)
    shape.field(metric, "value", NUMBER, "a number", keys=keys, required=True)
    for key in ("n", "denominator"):
        shape.field(metric, key, (int,), "a whole number", keys=keys)
    ci = shape.field(metric, "ci95", (list,), "a list [low, high]", keys=keys)
    if ci is not None and (len(ci) != 2 or any(v is not None and not _is_number(v) for v in ci)):
        raise shape.fail((*keys, "ci95"), ci, "a list of two numbers [low, high]")
    shape.field(metric, "ci_method", (str,), "a string", keys=keys)
    shape.field(metric, "clusters", (int,), "a whole number", keys=keys)  # a cluster bootstrap's
    shape.field(metric, "detail", (dict,), "an object", keys=keys)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_metrics(record: Any, path: Path, text: str = "", *, full: bool = True) -> dict[str, Any]:
    """A metrics.json record of the shape the report, the summary, compare and the analyses
    read (older records without `model_id`, `complete`, ... pass). ``full=False`` (what an
    analysis needs) does not require `primary` and `metrics`, but checks them when present."""
    shape = _Shape(path, text)
    record = shape.obj(record)
    for key in ("task", "model", "primary"):
        value = shape.field(
            record, key, (str,), "a string", required=full or key != "primary", null=False
        )
        if key in record and not value:
            raise shape.fail((key,), value, "a non-empty string")
    for key in ("family", "view", "model_id"):
        shape.field(record, key, (str,), "a string")
    metrics = shape.field(record, "metrics", (dict,), "an object", required=full, null=False)
    if metrics is not None and not metrics:
        raise shape.fail(("metrics",), metrics, "at least one metric")
    for name, metric in (metrics or {}).items():
        _check_metric(shape, metric, ("metrics", name))
    if "primary" in record and metrics is not None and record["primary"] not in metrics:
        raise DamagedFileError(
            f"the primary metric {record['primary']!r} is not under `metrics`",
            where=at(path, _line_of(text, ("primary",))),
            fix=_job_fix(path),
        )
    for name, metric in (shape.field(record, "strict", (dict,), "an object") or {}).items():
        _check_metric(shape, metric, ("strict", name))
    statuses = shape.field(record, "statuses", (dict,), "an object") or {}
    for name in statuses:
        shape.field(statuses, name, (int,), "a whole number", keys=("statuses",))
    for key in ("n", "degraded", "truncated"):
        shape.field(record, key, (int,), "a whole number")
    shape.field(record, "complete", (bool,), "true or false")
    for key in ("counts", "incomplete", "system", "seconds"):
        shape.field(record, key, (dict,), "an object")
    sha = shape.field(record, "sha256", (dict,), "an object") or {}
    shape.field(sha, "data", (dict,), "an object", keys=("sha256",))
    shape.field(sha, SAMPLES_FILE, (str,), "a string", keys=("sha256",))
    return record


def check_provenance(record: Any, path: Path, text: str = "") -> dict[str, Any]:
    """A provenance.json record of the shape the analyses read (config, task spec, data root)."""
    shape = _Shape(path, text)
    record = shape.obj(record)
    shape.field(record, "config", (dict,), "an object")
    shape.field(record, "data_root", (str,), "a string")
    for key in ("data_files_sha256", "predictions_sha256"):
        shape.field(record, key, (dict,), "an object")
    spec = shape.field(record, "task_spec", (dict,), "an object") or {}
    keys = ("task_spec",)
    for key in ("loader", "prompt"):
        part = shape.field(spec, key, (dict,), "an object", keys=keys) or {}
        for inner in ("params", "templates"):
            shape.field(part, inner, (dict,), "an object", keys=(*keys, key))
    shape.field(spec, "data", (list,), "a list", keys=keys)
    for key in ("metrics", "analyses"):
        for i, ref in enumerate(shape.field(spec, key, (list,), "a list", keys=keys) or []):
            ref = shape.obj(ref, (*keys, key, str(i)))
            if key == "analyses":
                shape.field(
                    ref, "name", (str,), "a string", keys=(*keys, key), required=True, null=False
                )
            shape.field(ref, "params", (dict,), "an object", keys=(*keys, key))
    return record


def check_error(record: Any, path: Path, text: str = "") -> dict[str, Any]:
    """An error.json record: task, view, model and the error message."""
    shape = _Shape(path, text)
    record = shape.obj(record)
    for key in ("task", "view", "model", "model_id", "error"):
        shape.field(record, key, (str,), "a string")
    return record


def check_planned(record: Any, path: Path, text: str = "") -> dict[str, Any]:
    """sweep.json: when the sweep started and its planned jobs (lists of overrides)."""
    shape = _Shape(path, text)
    record = shape.obj(record)
    jobs = shape.field(record, "jobs", (list,), "a list of jobs", required=True, null=False)
    for job in jobs:
        if not isinstance(job, list) or not all(isinstance(o, str) for o in job):
            raise shape.fail(("jobs",), job, "a list of overrides (strings) per job")
    shape.field(record, "started", (str,), "a string")
    return record


def read_checked(path: Path, check: Callable[[Any, Path, str], dict[str, Any]]) -> dict[str, Any]:
    """Read a JSON file of a sweep and check its shape; either fails with a located line."""
    data, text = _load_json(path)
    return check(data, path, text)


def _sample_rows(path: Path) -> Iterable[dict[str, Any]]:
    """The rows of a samples.jsonl, each an object with an `id` (file:line when not)."""
    from benchreg.core.reader import json_lines

    try:
        for number, row, _ in json_lines(path):
            shape = _Shape(path, "", number)
            row = shape.obj(row)
            sample_id = shape.field(
                row, "id", (str, int), "a string or number", required=True, null=False
            )
            if sample_id == "":
                raise shape.fail(("id",), sample_id, "a non-empty id")
            shape.field(row, "status", (str,), "a string")
            shape.field(row, "score", NUMBER, "a number")
            for key in ("scores", "meta", "metadata"):
                shape.field(row, key, (dict,), "an object")
            yield row
    except DamagedFileError:
        raise
    except BenchregError as exc:
        raise DamagedFileError(exc.what, where=exc.where, fix=_job_fix(path)) from None


# (path, size, mtime, sha256) -> the rows of a verified samples.jsonl, while samples_shared() runs
_shared_rows: dict[tuple[str, int, int, str], list[dict[str, Any]]] | None = None


@contextlib.contextmanager
def samples_shared() -> Iterator[dict[Any, list[dict[str, Any]]]]:
    """Within this block each verified samples.jsonl is decoded once, however many job records
    read it: a sweep's end reads every job's rows for its analyses and again for the sample
    browser (at 80,000 samples, decoding them is most of that end). The row dicts are shared:
    readers never change them (each gets a list of its own). Yields the rows by file (a caller
    about to exit may keep them from being freed one by one)."""
    global _shared_rows
    outer, _shared_rows = _shared_rows, (_shared_rows if _shared_rows is not None else {})
    try:
        yield _shared_rows
    finally:
        _shared_rows = outer


def _shared_key(path: Path, expected: str) -> tuple[str, int, int, str] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (str(path.resolve()), stat.st_size, stat.st_mtime_ns, expected)


_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19


def _verified_rows(path: Path, expected: Any) -> list[dict[str, Any]] | None:
    """The rows of a samples.jsonl that is as its run wrote it (its bytes have the sha256 that
    metrics.json recorded), decoded by orjson line by line without the checks of
    :func:`_sample_rows` (every row the run wrote is an object with an id, no key twice).
    None when the file is not that, or orjson does not read a line as `json` does (NaN, an
    integer beyond 64 bits): :func:`_sample_rows` then reads it, checking every line. Read
    once per file inside :func:`samples_shared`."""
    if not isinstance(expected, str):
        return None
    key = _shared_key(path, expected) if _shared_rows is not None else None
    if key is not None and _shared_rows is not None and key in _shared_rows:
        return list(_shared_rows[key])
    rows = _decoded_rows(path, expected)
    if rows is not None and key is not None and _shared_rows is not None:
        _shared_rows[key] = rows
        return list(rows)
    return rows


def _decoded_rows(path: Path, expected: str) -> list[dict[str, Any]] | None:
    import orjson

    try:
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != expected or _LONG_DIGITS in data.translate(_DIGITS):
            return None  # not as written, or maybe an integer orjson reads as a float
        rows = [orjson.loads(line) for line in data.split(b"\n") if line]
    except (OSError, orjson.JSONDecodeError):
        return None
    if not all(type(row) is dict and "id" in row for row in rows):
        return None
    return rows


def check_samples(path: Path, record: dict[str, Any]) -> None:
    """samples.jsonl as the run wrote it: the sha256 that metrics.json recorded, else (older
    runs) every line an object with an id. Which line or count differs is said when it can be."""
    from benchreg.core.io import sha256_file

    metrics_path = path.parent / METRICS_FILE
    if not path.is_file():
        raise DamagedFileError(
            f"missing (its {METRICS_FILE} says the run finished)",
            where=path,
            fix=_job_fix(path),
        )
    expected = (record.get("sha256") or {}).get(SAMPLES_FILE)
    try:
        if expected and sha256_file(path) == expected:
            return
    except OSError as exc:
        raise DamagedFileError(
            f"cannot read the file ({exc.strerror})", where=path, fix=_job_fix(path)
        ) from None
    rows = sum(1 for _ in _sample_rows(path))  # a damaged line fails here, with its line
    n = record.get("n")
    if n is not None and rows != n:
        raise DamagedFileError(
            f"holds {rows} rows, {metrics_path.name} says the run has {n} samples (cut or changed "
            "after the run wrote it)",
            where=path,
            fix=_job_fix(path),
        )
    if expected:
        raise DamagedFileError(
            f"does not match the sha256 that {metrics_path.name} recorded (changed after the "
            "run wrote it)",
            where=path,
            fix=_job_fix(path),
        )


def read_job(folder: Path, *, full: bool = True) -> JobRecord:
    """One finished job folder, every file checked: metrics.json (``full``: see
    :func:`check_metrics`), provenance.json (when present) and samples.jsonl."""
    metrics = read_checked(
        folder / METRICS_FILE, lambda data, path, text: check_metrics(data, path, text, full=full)
    )
    provenance_path = folder / PROVENANCE_FILE
    provenance = (
        read_checked(provenance_path, check_provenance)
        if provenance_path.exists() or provenance_path.is_symlink()
        else {}
    )
    check_samples(folder / SAMPLES_FILE, metrics)
    return JobRecord(folder, metrics, provenance)


def check_sweep(sweep_dir: Path) -> list[JobRecord]:
    """Everything `analyze`, `report` and `compare` read from ``sweep_dir``, checked before any
    of them writes: that it is a sweep folder (:func:`check_sweep_folder`), and the shape of
    sweep.json, of every job's metrics.json, provenance.json, samples.jsonl or error.json, and of
    every analysis_*.json. Returns the finished jobs (incomplete ones too: see
    :attr:`JobRecord.complete`); the first damaged file is a :class:`DamagedFileError`."""
    check_sweep_folder(sweep_dir)
    if (sweep_dir / SWEEP_FILE).exists():
        read_checked(sweep_dir / SWEEP_FILE, check_planned)
    for path in sorted(sweep_dir.glob(ANALYSIS_GLOB)):
        read_checked(path, lambda data, p, text: _Shape(p, text).obj(data))
    for folder in job_folders(sweep_dir):
        if (folder / ERROR_FILE).is_file():
            read_checked(folder / ERROR_FILE, check_error)
    return read_jobs(sweep_dir, incomplete=True, full=True)


# --- helpers shared by the families' analyses ----------------------------------------------------

_SHA256 = re.compile(r"[0-9a-f]{64}")
SHORT_IDENTITY_MAX = 48


def short_identity(identity: str) -> str:
    """A readable form of an identity: every sha256 cut to its first 12 hex digits
    (`predictions:sha256=0123456789ab`); an identity that is still long keeps its start and
    gets a 10-hex digest of the whole, so two long identities stay apart."""
    short = _SHA256.sub(lambda m: m.group(0)[:12], identity)
    if len(short) <= SHORT_IDENTITY_MAX:
        return short
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:10]
    return f"{short[: SHORT_IDENTITY_MAX - 12]}…#{digest}"


MODEL_TAG_HEX = 8


def model_tag(identity: str) -> str:
    """8 hex digits that tell two models apart in a label: the start of the sha256 the identity
    holds (a predictions file's), else of the sha256 of the identity itself."""
    found = _SHA256.search(identity)
    digest = found.group(0) if found else hashlib.sha256(identity.encode("utf-8")).hexdigest()
    return digest[:MODEL_TAG_HEX]


def identity_labels(models: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(display name, model identity) -> a label unique among ``models``: the display name,
    and when models of other identities share it, the short tag of its identity in brackets
    (`predictions:results.json [0123abcd]`; :func:`model_tag`, or :func:`short_identity` when
    two tags collide)."""
    owners: dict[str, list[str]] = {}
    for name, identity in models:
        if identity not in owners.setdefault(name, []):
            owners[name].append(identity)
    labels: dict[tuple[str, str], str] = {}
    for name, identities in owners.items():
        if len(identities) == 1:
            labels[(name, identities[0])] = name
            continue
        tags = {i: model_tag(i) for i in identities}
        if len(set(tags.values())) < len(identities):
            tags = {i: short_identity(i) for i in identities}
        if len(set(tags.values())) < len(identities):
            tags = {i: i for i in identities}
        for identity in identities:
            labels[(name, identity)] = f"{name} [{tags[identity]}]"
    return labels


def system_labels(jobs: Iterable[JobRecord]) -> dict[tuple[str, str], str]:
    """:attr:`JobRecord.system_key` -> a label unique among ``jobs``: the display name (all of
    them, `a / b`, when one model was shown under several names); the short identity in brackets
    when another model shares a name (two files both called `results.json`); `@ <root>` when one
    model ran on several data roots."""
    names: dict[str, list[str]] = {}
    roots: dict[str, list[str]] = {}
    for job in jobs:
        group = job.group
        if job.model not in names.setdefault(group, []):
            names[group].append(job.model)
        if job.data_root not in roots.setdefault(group, []):
            roots[group].append(job.data_root)
    owners: dict[str, set[str]] = {}
    for group, shown in names.items():
        for name in shown:
            owners.setdefault(name, set()).add(group)
    labels: dict[tuple[str, str], str] = {}
    for group, shown in names.items():
        base = " / ".join(shown)
        if any(len(owners[name]) > 1 for name in shown):
            base += f" [{short_identity(group)}]"
        for root in roots[group]:
            labels[(group, root)] = f"{base} @ {root}" if len(roots[group]) > 1 else base
    if len(set(labels.values())) < len(labels):  # short forms collided: show them in full
        labels = {key: f"{label} [{key[0]}]" for key, label in labels.items()}
    return labels


def group_identities(jobs: Iterable[JobRecord]) -> dict[str, list[str]]:
    """Model group -> the identities of its jobs (one, unless a label ties several files)."""
    out: dict[str, list[str]] = {}
    for job in jobs:
        if job.model_id not in out.setdefault(job.group, []):
            out[job.group].append(job.model_id)
    return out


def default_job_key(job: JobRecord) -> tuple[str, str, str, str | None]:
    return (job.group, job.data_root, job.task, job.view)


def unique_jobs(
    jobs: Iterable[JobRecord],
    analysis: str,
    key: Callable[[JobRecord], Hashable] = default_job_key,
) -> dict[Any, JobRecord]:
    """Index jobs by ``key`` (default: model group, data root, task, view). Two jobs with one key
    are an error of the analysis that names both folders: which of them holds the result cannot
    be guessed, and mixing them would report numbers that belong to neither."""
    found: dict[Any, JobRecord] = {}
    for job in jobs:
        k = key(job)
        if k in found:
            first = found[k]
            view = f", view {job.view}" if job.view else ""
            if first.model_id == job.model_id:
                same = f"identity {short_identity(job.model_id)}"
            else:
                same = (
                    f"label {job.label!r} on {short_identity(first.model_id)} and "
                    f"{short_identity(job.model_id)}"
                )
            raise DuplicateJobError(
                f"analysis {analysis}: two jobs of model {job.model!r} ({same}) for task "
                f"{job.task}{view}: {first.dir} and {job.dir}",
                fix="run each model once per task and view in a sweep (different models need "
                "different contents, not just different labels), or analyse the runs in "
                "separate sweep folders",
            )
        found[k] = job
    return found


def model_heading(label: str, identities: Iterable[str]) -> str:
    """A markdown heading for one model: its label, and its identity (identities) in full."""
    found = list(identities)
    what = "model identity" if len(found) == 1 else "model identities (labelled files)"
    return f"### {label}\n\n{what}: " + ", ".join(f"`{i}`" for i in found)


@dataclass(frozen=True, slots=True)
class PairedBinary:
    """Two 0/1 outcomes paired on sample id: discordant counts and the exact McNemar p."""

    n_pairs: int
    hits_a: int
    hits_b: int
    only_a: int  # hit in a, not in b
    only_b: int
    p_mcnemar: float  # two-sided
    p_a_greater: float = 1.0  # one-sided exact McNemar: a hits more often than b

    @property
    def difference(self) -> float:
        """rate(a) - rate(b) over the pairs."""
        return (self.hits_a - self.hits_b) / self.n_pairs if self.n_pairs else 0.0


def paired_binary(a: dict[str, bool], b: dict[str, bool]) -> PairedBinary:
    """Pair two 0/1 outcomes on their common ids. ``p_mcnemar`` is the two-sided exact McNemar
    p; ``p_a_greater`` the one-sided one (H1: a is hit more often than b), i.e. the exact binomial
    P(X >= only_a) with X ~ Bin(only_a + only_b, 1/2)."""
    from benchreg.core.stats import binomial_greater, mcnemar_exact

    keys = sorted(set(a) & set(b))
    only_a = sum(1 for k in keys if a[k] and not b[k])
    only_b = sum(1 for k in keys if b[k] and not a[k])
    return PairedBinary(
        n_pairs=len(keys),
        hits_a=sum(a[k] for k in keys),
        hits_b=sum(b[k] for k in keys),
        only_a=only_a,
        only_b=only_b,
        p_mcnemar=mcnemar_exact(only_a, only_b),
        p_a_greater=binomial_greater(only_a, only_a + only_b, 0.5),
    )


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """A GitHub markdown table; floats with 4 decimals, None as an empty cell."""

    def cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            return f"{value:.4f}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def rate_with_ci(hits: int, n: int, digits: int = 3) -> str:
    """`0.300 [0.210, 0.410] (30/100)`: a rate with its Wilson 95% CI and counts."""
    from benchreg.core.stats import wilson_ci

    if n == 0:
        return "n/a (0/0)"
    lo, hi = wilson_ci(hits, n)
    return f"{hits / n:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}] ({hits}/{n})"
