"""One run per folder: a run folder is claimed, resumed or refused, never shared by two runs.

A run's identity (its fingerprint) is the sha256 of everything that decides its results: the task
spec, the view, the system config, the data files (path, size, mtime), and the run options that
change scores (limit, seed, bootstrap). ``run.json`` records it when the run starts; the finished
outputs are written last, ``metrics.json`` last of all (it marks the run complete).

Opening a folder:

- empty or new: claimed for this run;
- an unfinished run with the same fingerprint: resumed (the journal's answers are kept);
- a finished run with the same fingerprint: reused as it is when ``reuse_finished`` (a resumed
  sweep), else refused;
- anything else (another run, finished or not, or files benchreg did not write): refused, unless
  ``overwrite`` and every file in it is a run file benchreg writes, which are then removed.

A lock (``.lock``, flock) keeps a second process out of a folder in use.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError
from benchreg.core.io import atomic_write_json, sha256_text
from benchreg.core.journal import JOURNAL_FILE

RUN_FILE = "run.json"
LOCK_FILE = ".lock"
METRICS_FILE = "metrics.json"
ERROR_FILE = "error.json"
HYDRA_SUBDIR = ".hydra"  # Hydra's config copies (hydra.output_subdir=.hydra), written redacted
RUN_FILES = frozenset(
    {
        RUN_FILE,
        LOCK_FILE,
        METRICS_FILE,
        ERROR_FILE,
        JOURNAL_FILE,
        "samples.jsonl",
        "provenance.json",
        "prompts.jsonl",
        "validation.json",
        HYDRA_SUBDIR,
    }
)


def run_fingerprint(
    spec_json: Mapping[str, Any],
    view: str | None,
    system_cfg: Mapping[str, Any],
    data_files: Iterable[Path],
    result_options: Mapping[str, Any],
) -> str:
    files = []
    for path in sorted(set(data_files)):
        stat = path.stat()
        files.append([str(path), stat.st_size, stat.st_mtime_ns])
    identity = {
        "task": spec_json,
        "view": view,
        "system": system_cfg,
        "data": files,
        "options": result_options,
    }
    return sha256_text(json.dumps(identity, sort_keys=True, default=str))


@dataclass
class RunFolder:
    path: Path
    fingerprint: str
    state: str  # "new", "resumed" or "finished"
    info: dict[str, Any] = field(default_factory=dict)
    _lock: Any = None

    @property
    def finished(self) -> bool:
        return self.state == "finished"

    def release(self) -> None:
        if self._lock is not None:
            release_lock(self._lock)
            self._lock = None


def open_run_folder(
    path: Path,
    fingerprint: str,
    info: Mapping[str, Any],
    *,
    overwrite: bool = False,
    reuse_finished: bool = False,
) -> RunFolder:
    """Claim ``path`` for the run ``fingerprint`` (see the module docstring); ``info`` (task,
    view, model) goes into run.json and into the messages of a refusal."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise BenchregError(
            "the run folder is a file", where=path, fix="choose another folder"
        ) from None
    except PermissionError:
        raise BenchregError(
            "the run folder cannot be created (permission denied)", where=path
        ) from None
    lock = _lock(path)
    try:
        state = _claim(path, fingerprint, overwrite=overwrite, reuse_finished=reuse_finished)
    except BaseException:
        release_lock(lock)
        raise
    if state != "finished":
        (path / ERROR_FILE).unlink(missing_ok=True)
        record = {
            "fingerprint": fingerprint,
            **dict(info),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            "attempt": _attempt(path) + 1,
        }
        atomic_write_json(path / RUN_FILE, record)
    return RunFolder(path, fingerprint, state, dict(info), lock)


def _lock(path: Path) -> Any:
    try:
        return try_lock(
            path / LOCK_FILE,
            "another benchreg process is writing this run folder",
            fix="wait for it to finish, or choose another folder",
        )
    except PermissionError:
        raise BenchregError("the run folder is not writable", where=path) from None


def try_lock(lock_file: Path, busy: str, *, fix: str) -> Any:
    """Hold an exclusive flock on ``lock_file`` (returned: close or `release_lock` it to let
    go); when another process holds it, one clear error naming the folder."""
    handle = lock_file.open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise BenchregError(busy, where=lock_file.parent, fix=fix) from None
    return handle


def release_lock(handle: Any) -> None:
    fcntl.flock(handle, fcntl.LOCK_UN)
    handle.close()


def _claim(path: Path, fingerprint: str, *, overwrite: bool, reuse_finished: bool) -> str:
    entries = {p.name for p in path.iterdir()} - {LOCK_FILE, HYDRA_SUBDIR}
    if not entries:
        return "new"
    foreign = sorted(entries - RUN_FILES)
    if foreign:
        raise BenchregError(
            f"the run folder holds files benchreg did not write ({', '.join(foreign[:5])})",
            where=path,
            fix="choose an empty or new folder for the run",
        )
    previous = _read_run(path)
    same = previous.get("fingerprint") == fingerprint
    finished = (path / METRICS_FILE).is_file()
    if same and not finished:
        return "resumed"
    if same and reuse_finished:
        return "finished"
    if not overwrite:
        what = "a finished run" if finished else "an unfinished run"
        if same:
            detail = "of the same task and config"
        else:
            detail = f"of {previous.get('task', '?')} ({previous.get('model', '?')})"
        raise BenchregError(
            f"the run folder already holds {what} {detail}",
            where=path,
            fix="pass run.overwrite=true to replace it, or choose another folder",
        )
    for name in entries:
        (path / name).unlink()
    return "new"


def _read_run(path: Path) -> dict[str, Any]:
    try:
        data = json.loads((path / RUN_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _attempt(path: Path) -> int:
    value = _read_run(path).get("attempt", 0)
    return value if isinstance(value, int) else 0
