"""One run per folder: a run folder is claimed, resumed or refused, never shared by two runs.

A run's identity (its fingerprint) is the sha256 of everything that decides its results: the task
spec, the view, the system config, the data files (path and content sha256: a file touched
without a change is the same input), and the run options that change scores (limit, seed,
bootstrap). ``run.json`` records it, and the hash of each part (so that a refusal says which
input changed), when the run starts; the finished outputs are written last, ``metrics.json`` last
of all (it marks the run finished: complete, or incomplete when requests failed).

Opening a folder:

- empty or new: claimed for this run;
- an unfinished run with the same fingerprint: resumed (the journal's answers are kept);
- a finished run with the same fingerprint: reused as it is when ``reuse_finished`` (a resumed
  sweep), else refused;
- a failed attempt of another run that kept no answer (only its claim, ``error.json`` and failed
  requests in its journal: the sweep job whose input was wrong): claimed anew, its files removed;
- anything else (another run, finished or not, or files benchreg did not write): refused, unless
  ``overwrite`` and every file in it is a run file benchreg writes, which are then removed.

A run that fails before keeping any answer gives its claim back (:meth:`RunFolder.abandon`), so
the corrected command finds the folder empty.

A lock (``.lock``, flock) keeps a second process out of a folder in use; it is removed when the
run lets go of it (an empty file left in every run folder said nothing).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loguru import logger

from benchreg.core.errors import BenchregError
from benchreg.core.io import atomic_write_json, sha256_file, sha256_text
from benchreg.core.journal import JOURNAL_FILE, holds_answers

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
# what a failed attempt leaves behind: with no answer in the journal nothing in it is a result
FAILED_ATTEMPT_FILES = frozenset({RUN_FILE, ERROR_FILE, JOURNAL_FILE})
LOCK_ATTEMPTS = 5  # a lock file removed by its holder between our open and flock: open it again

FINGERPRINT_PARTS = {
    "task": "the task entry",
    "view": "the view",
    "system": "the model / system config",
    "data": "the data files",
    "options": "the run options (limit, seed, bootstrap, final)",
}


class Fingerprint(str):
    """A run's fingerprint; ``parts`` holds the hash of each input that went into it."""

    parts: dict[str, str]


def refuse_inside_run_folder(out: Path, fix: str) -> None:
    """A run folder holds only its own run's files: an output of another command there (or
    below it) is bad input, whatever the command."""
    where = out.resolve()
    for folder in (where, *where.parents):
        if (folder / METRICS_FILE).is_file() or (folder / RUN_FILE).is_file():
            raise BenchregError(
                f"--out lies inside the run folder {folder}, which holds only the run's own files",
                where=out,
                fix=fix,
            )


def run_fingerprint(
    spec_json: Mapping[str, Any],
    view: str | None,
    system_cfg: Mapping[str, Any],
    data_files: Iterable[Path],
    result_options: Mapping[str, Any],
) -> Fingerprint:
    files = [[str(path), sha256_file(path)] for path in sorted(set(data_files))]
    identity = {
        "task": spec_json,
        "view": view,
        "system": system_cfg,
        "data": files,
        "options": result_options,
    }
    fingerprint = Fingerprint(sha256_text(json.dumps(identity, sort_keys=True, default=str)))
    fingerprint.parts = {
        key: sha256_text(json.dumps(value, sort_keys=True, default=str))[:16]
        for key, value in identity.items()
    }
    return fingerprint


def changed_inputs(previous: Mapping[str, Any], fingerprint: str) -> str:
    """What differs from the run recorded in a folder (`run.json`), in words."""
    old = previous.get("inputs")
    new = getattr(fingerprint, "parts", None)
    if not isinstance(old, dict) or not new:
        return ""
    changed = [FINGERPRINT_PARTS[k] for k in FINGERPRINT_PARTS if old.get(k) != new.get(k)]
    return f"; changed since: {', '.join(changed)}" if changed else ""


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

    def unclaim(self) -> None:
        """Undo the claim of a new folder (the run stopped before doing anything): its run.json
        goes, and the folder too when nothing else is in it."""
        if self.state != "new":
            return
        (self.path / RUN_FILE).unlink(missing_ok=True)
        self.release()
        with contextlib.suppress(OSError):
            self.path.rmdir()

    def abandon(self) -> None:
        """The run failed: when it kept no answer (nothing to resume), its claim and journal of
        failed requests go, and the folder too when nothing else is in it, so the corrected
        command finds it free. A run with answers keeps them for the same command to resume."""
        if self.state == "finished" or not failed_attempt_only(self.path):
            return
        for name in FAILED_ATTEMPT_FILES:
            (self.path / name).unlink(missing_ok=True)
        self.release()
        with contextlib.suppress(OSError):
            self.path.rmdir()


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
            "inputs": getattr(fingerprint, "parts", {}),
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
    """Hold an exclusive flock on ``lock_file`` (returned: `release_lock` it to let go, which
    removes the file); when another process holds it, one clear error naming the folder."""
    for _ in range(LOCK_ATTEMPTS):
        handle = lock_file.open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise BenchregError(busy, where=lock_file.parent, fix=fix) from None
        if _same_file(handle, lock_file):
            return handle
        # its holder removed it as it let go: this lock is on a file no one else will open
        release_lock(handle, remove=False)
    raise BenchregError(busy, where=lock_file.parent, fix=fix)


def _same_file(handle: Any, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(handle.fileno())
    return (held.st_dev, held.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def release_lock(handle: Any, *, remove: bool = True) -> None:
    """Let go of a lock from :func:`try_lock`; its file is removed first, while still held, so
    that a process that opens it meanwhile finds it gone (and opens a new one) on locking."""
    if remove:
        with contextlib.suppress(OSError):
            os.unlink(handle.name)
    fcntl.flock(handle, fcntl.LOCK_UN)
    handle.close()


def own_temp_file(name: str) -> bool:
    """A temp file benchreg's atomic writes leave when killed (`.<run file>.<random>.tmp`)."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return False
    stem = name[1:-4].rsplit(".", 1)[0]
    return stem in RUN_FILES


def _claim(path: Path, fingerprint: str, *, overwrite: bool, reuse_finished: bool) -> str:
    for leftover in [p for p in path.iterdir() if own_temp_file(p.name)]:
        leftover.unlink(missing_ok=True)  # of a killed attempt: never part of a run
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
    damage = metrics_damage(path)
    finished = damage is None and (path / METRICS_FILE).is_file() and not run_is_incomplete(path)
    if same and not finished:
        if damage is not None:
            _resume_damaged(path, damage)
        return "resumed"
    if same and reuse_finished:
        return "finished"
    if ERROR_FILE in entries and failed_attempt_only(path):
        _remove(path, entries)
        logger.info(f"{path}: held only a failed attempt that kept no answer: claimed anew")
        return "new"
    if not overwrite:
        what = "a finished run" if finished else "an unfinished run"
        if damage is not None:
            what = f"a run whose metrics.json is damaged ({damage})"
        raise BenchregError(
            f"the run folder already holds {what} {_held(previous, fingerprint, same, entries)}",
            where=path,
            fix="pass run.overwrite=true to replace it, or choose another folder",
        )
    _remove(path, entries)
    return "new"


def _held(previous: Mapping[str, Any], fingerprint: str, same: bool, entries: set[str]) -> str:
    """Which run a refused folder holds, in words (and which input changed since)."""
    if same:
        return "of the same task and config"
    if previous.get("task"):
        view = f" view={previous['view']}" if previous.get("view") else ""
        return (
            f"of {previous['task']}{view} (model {previous.get('model', '?')})"
            f"{changed_inputs(previous, fingerprint)}"
        )
    return f"(files {', '.join(sorted(entries)[:6])}; no readable run.json)"


def _resume_damaged(path: Path, damage: str) -> None:
    """Say that a run whose metrics.json is damaged is resumed and written again; a folder in
    the file's place cannot be written over: one clear error."""
    if (path / METRICS_FILE).is_dir():
        raise BenchregError(
            f"damaged: {damage}",
            fix="remove that folder, then run the same command again to resume the run",
        )
    logger.warning(
        f"damaged: {damage}: the run is resumed (answers journaled are kept) and its outputs "
        "are written again"
    )


def _remove(path: Path, names: Iterable[str]) -> None:
    for name in names:
        (path / name).unlink()


def failed_attempt_only(path: Path) -> bool:
    """Whether ``path`` holds only what a failed attempt leaves (its claim, error.json, a
    journal of failed requests, Hydra's config copies) and no answer: nothing in it is anyone's
    result."""
    names = {p.name for p in path.iterdir()} - {LOCK_FILE, HYDRA_SUBDIR}
    return names <= FAILED_ATTEMPT_FILES and not holds_answers(path)


_READ: dict[tuple[str, int, int, int, int], tuple[bool, str | None]] = {}


def run_is_incomplete(folder: Path) -> bool:
    """Whether the folder's finished outputs say the run is incomplete (failed requests not
    asked again yet): the same command resumes such a run."""
    return _metrics_state(folder)[0]


def metrics_damage(folder: Path) -> str | None:
    """``<file>[:line]: <why>`` when the folder's metrics.json is there but cannot be what
    benchreg wrote (cut, not JSON, not an object, not a file); None when it reads or is absent.
    The same command resumes a run whose metrics.json is damaged (its outputs written again)."""
    return _metrics_state(folder)[1]


def _metrics_state(folder: Path) -> tuple[bool, str | None]:
    """(incomplete, damage) of the folder's metrics.json. Read once per file (path, device,
    inode, size, mtime: it is only ever replaced, never written in place), as a sweep asks for
    every job folder's state at the start of each job."""
    path = folder / METRICS_FILE
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False, (f"{path}: a link to nothing" if path.is_symlink() else None)
    except OSError as exc:
        return False, f"{path}: unreadable ({exc.strerror or type(exc).__name__})"
    key = (os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    known = _READ.get(key)
    if known is None:
        known = _READ[key] = _read_metrics(path)
    return known


def _read_metrics(path: Path) -> tuple[bool, str | None]:
    if path.is_dir():
        return False, f"{path}: a folder where a file is expected"
    try:
        record = json.loads(path.read_bytes())
    except json.JSONDecodeError as exc:
        return False, f"{path}:{exc.lineno}: malformed JSON ({exc.msg}, column {exc.colno})"
    except (OSError, ValueError, RecursionError) as exc:
        return False, f"{path}: unreadable ({type(exc).__name__})"
    if not isinstance(record, dict):
        return False, f"{path}: holds a JSON {type(record).__name__}, not an object"
    return record.get("complete") is False, None


def _read_run(path: Path) -> dict[str, Any]:
    try:
        data = json.loads((path / RUN_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _attempt(path: Path) -> int:
    value = _read_run(path).get("attempt", 0)
    return value if isinstance(value, int) else 0
