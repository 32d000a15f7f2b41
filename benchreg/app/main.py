"""The Hydra entry point: resolve the task, do what `mode=` asks, record failures."""

from __future__ import annotations

import base64
import contextlib
import functools
import os
import secrets
import signal
import sys
import threading
import traceback
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from loguru import logger
from omegaconf import DictConfig, OmegaConf

from benchreg.app import logs, modes
from benchreg.app.callbacks import SWEEP_RESULT
from benchreg.app.config import (
    app_settings,
    bound_task,
    register_family_roots,
    with_family_groups,
)
from benchreg.app.errors import os_error, reject_secret_overrides, reword
from benchreg.core.errors import BenchregError, IncompleteRunError
from benchreg.core.outputs import write_error
from benchreg.core.provenance import redact_override, redact_text
from benchreg.core.resources import conf_dir

_state = {"failures": 0}


def _slug(*parts: Any) -> str:
    return "_".join(str(p).replace("/", "-") for p in parts if p not in (None, "", "None"))


# What a run folder holds, when it is not a model's run: named after it, not after the model.
MODE_FOLDER = {"prompts": "prompts", "validate": "validation"}
MIN_JOB_DIGITS = 3  # job folders `000_...`: sorted by name = sorted by number


def _default_view(task: str, searchpath: Any = None) -> str | None:
    """The view a run of ``task`` reads when `view=` is not given: the entry's `default_view`
    (None for a task without views, or an entry that cannot be read: its run fails anyway)."""
    folders = tuple(str(entry) for entry in (searchpath or ()))
    return _default_view_cached(task, folders)


@functools.cache
def _default_view_cached(task: str, searchpath: tuple[str, ...]) -> str | None:
    from benchreg.app.config import searchpath_folders
    from benchreg.core.entries import compose_entry, find_task_file, task_folders

    try:
        folders = task_folders(searchpath_folders(searchpath))
        path = find_task_file(task, folders)
        if path is None:
            return None
        data, _ = compose_entry(path, folders)
    except Exception:
        return None
    view = data.get("default_view")
    return str(view) if isinstance(view, str) and view else None


def _run_name(task: Any, view: Any, model: Any, mode: Any = None, searchpath: Any = None) -> str:
    """`<task>_<view>_<model>`: the view always (the task's default view when `view=` is not
    given), and for `mode=prompts` / `mode=validate` what the folder holds instead of a model."""
    if view in (None, "", "None"):
        view = _default_view(str(task), searchpath)
    return _slug(task, view, MODE_FOLDER.get(str(mode), model))


def _job_number(num: Any, sweep_dir: Any = None) -> str:
    """The job number zero-padded to 3 digits (more for a sweep of 1000 jobs or more, as its
    sweep.json says), so that job folders sort in job order."""
    digits = MIN_JOB_DIGITS
    if sweep_dir not in (None, "", "None"):
        from benchreg.app.sweepfolder import planned_jobs

        with contextlib.suppress(Exception):
            planned = planned_jobs(Path(str(sweep_dir)))
            if planned:
                digits = max(digits, len(str(len(planned) - 1)))
    return str(num).zfill(digits) if str(num).isdigit() else str(num)


UID_ENV = "BENCHREG_RUN_UID"
JOB_ERROR_KEY = "benchreg_job_error"  # set by the sweeper on a job whose overrides are bad


_UID = secrets.token_hex(3)


def _uid() -> str:
    """A short token unique to this command, so two runs started in the same second never share
    a folder; :func:`main` sets a fresh one in the environment, where launcher workers (other
    processes that compose the same job) find it."""
    return os.environ.get(UID_ENV) or _UID


OmegaConf.register_new_resolver("benchreg_slug", _slug, replace=True)
OmegaConf.register_new_resolver("benchreg_run_name", _run_name, replace=True)
OmegaConf.register_new_resolver("benchreg_job", _job_number, replace=True)
OmegaConf.register_new_resolver("benchreg_uid", _uid, replace=True)


register_family_roots()


def encode_job_error(message: str) -> str:
    return base64.urlsafe_b64encode(message.encode("utf-8")).decode("ascii").rstrip("=")


def decode_job_error(value: str) -> str:
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode("utf-8")


def reject_task_group_folders(argv: list[str]) -> None:
    """`task` is a plain string, not a config group: a search-path folder holding `task/` would
    make Hydra treat it as one and fail with an obscure message, so say what to rename."""
    for arg in argv:
        key, _, value = arg.partition("=")
        if key.lstrip("+") != "hydra.searchpath":
            continue
        for entry in value.strip("[]").split(","):
            folder = Path(entry.strip().removeprefix("file://")).expanduser()
            if (folder / "task").is_dir():
                raise BenchregError(
                    "task entries on the search path go under `tasks/`, not `task/`",
                    where=folder / "task",
                    fix=f"rename it to {folder / 'tasks'}",
                )


def run_job(
    cfg: DictConfig, out_dir: Path, searchpath: Iterable[str] = (), *, multirun: bool = False
) -> dict[str, Any]:
    """One job: the result of the selected mode (`failed` is true when it found errors)."""
    job_error = cfg.get(JOB_ERROR_KEY)
    if job_error:
        raise BenchregError(decode_job_error(str(job_error)))
    selected = app_settings(cfg).mode  # every run.* / model.* option checked before any work
    check_output_folder(out_dir)
    task = bound_task(cfg, searchpath)
    if selected == "validate":
        report = modes.validate(task, cfg, out_dir)
        return {"validate": report, "failed": report["errors"] > 0}
    if selected == "prompts":
        return {"prompts": str(modes.prompts(task, cfg, out_dir)), "failed": False}
    return {"record": modes.run(task, cfg, out_dir, multirun=multirun), "failed": False}


def log_sweep_progress(sweep_dir: Path, num: int, overrides: Iterable[str] = ()) -> None:
    """`sweep: job 3 of 45 starts: task=<family>/<name> view=<view> (2 done)`, read from the
    sweep folder (so under any launcher)."""
    from benchreg.app.sweepfolder import done_jobs, planned_jobs

    total = len(planned_jobs(sweep_dir) or [])
    done = done_jobs(sweep_dir)
    shown = " ".join(redact_override(o) for o in overrides if not o.startswith(f"+{JOB_ERROR_KEY}"))
    what = f": {shown}" if shown else ""
    logger.info(f"sweep: job {num + 1} of {total or '?'} starts{what} ({done} done)")


@hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")
def hydra_entry(cfg: DictConfig) -> dict[str, Any]:
    logs.setup_worker()  # a launcher's worker process: the command line's log format
    hydra_cfg = HydraConfig.get()
    out_dir = Path(hydra_cfg.runtime.output_dir)
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    if multirun:
        logs.share_once(out_dir.parent)
        log_sweep_progress(out_dir.parent, hydra_cfg.job.num, hydra_cfg.overrides.task)
    try:
        result = run_job(cfg, out_dir, hydra_cfg.searchpath, multirun=multirun)
        _state["failures"] += int(result["failed"])
        return result
    except IncompleteRunError as exc:  # its outputs are written, marked incomplete
        logger.error(exc.message)
        if not multirun:
            sys.exit(exc.exit_code)
        _state["failures"] += 1
        return {"error": exc.message, "failed": True, "incomplete": True}
    except BenchregError as exc:
        logger.error(exc.message)
        if not multirun:
            _drop_if_empty(out_dir)
            sys.exit(exc.exit_code)
        message = exc.message
    except OSError as exc:
        error = os_error(exc)
        logger.error(error.message)
        if not multirun:
            _drop_if_empty(out_dir)
            sys.exit(error.exit_code)
        message = error.message
    except Exception as exc:
        if not multirun:
            raise
        message = redact_text(f"{type(exc).__name__}: {exc}")
        logger.error(f"job failed: {message}\n{redact_text(traceback.format_exc())}")
    _state["failures"] += 1
    model = cfg.get("model")
    write_error(
        out_dir,
        _plain(cfg, "task"),
        _plain(cfg, "view"),
        model.get("name") if hasattr(model, "get") else None,
        redact_text(message),
    )
    return {"error": message, "failed": True}


def _plain(cfg: DictConfig, key: str) -> Any:
    value = cfg.get(key)
    return value if value is None or isinstance(value, str | int | float | bool) else str(value)


def check_output_folder(out_dir: Path) -> None:
    """The run folder must be a writable folder: found now, not after the evaluation."""
    if out_dir.exists() and not out_dir.is_dir():
        raise BenchregError(
            "the output folder is a file", where=out_dir, fix="choose another hydra.run.dir"
        )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with open(out_dir / f".write-test-{os.getpid()}", "w", encoding="utf-8") as handle:
            handle.write("")
        os.unlink(handle.name)
    except OSError as exc:
        raise BenchregError(
            f"the output folder is not writable ({exc.strerror or type(exc).__name__})",
            where=out_dir,
            fix="choose a writable hydra.run.dir / hydra.sweep.dir",
        ) from None


def _drop_if_empty(out_dir: Path) -> None:
    """A run stopped by bad input leaves no empty run folder behind."""
    with contextlib.suppress(OSError):
        out_dir.rmdir()


def _fail(error: BenchregError) -> None:
    logger.error(error.message)
    sys.exit(error.exit_code)


def default_job_note() -> str:
    """What `python -m benchreg` without arguments runs (the app config's defaults)."""
    base = OmegaConf.load(conf_dir() / "config.yaml")
    model = next(
        (
            d["model"]
            for d in base.get("defaults", [])
            if isinstance(d, dict | DictConfig) and "model" in d
        ),
        "baseline",
    )
    return (
        f"no arguments: running the default job (task={base.get('task')} on its embedded "
        f"sample, model={model}); `python -m benchreg --help` lists the subcommands and options"
    )


def main() -> None:
    """`python -m benchreg [overrides]`: check the arguments, run Hydra, exit 2 when a job (or
    an analysis of a sweep) failed."""
    logs.setup()
    check_arguments(sys.argv[1:])
    sys.argv[1:] = with_family_groups(sys.argv[1:])
    os.environ[UID_ENV] = secrets.token_hex(3)
    stopped_by = _stop_on_signals()
    run_hydra(stopped_by)
    if _state["failures"] or SWEEP_RESULT.get("not_ok"):
        sys.exit(2)


def check_arguments(argv: list[str]) -> None:
    """What needs no config: the default job's note, a `task/` folder on the search path, a
    secret on the command line (refused before Hydra echoes or stores it)."""
    if not argv:
        logger.info(default_job_note())
    try:
        reject_task_group_folders(argv)
        reject_secret_overrides(argv)
    except BenchregError as exc:
        _fail(exc)


FULL_ERROR_ENV = "HYDRA_FULL_ERROR"  # Hydra's documented switch: raise errors, print nothing


@contextlib.contextmanager
def hydra_errors_raised() -> Iterator[None]:
    """Hydra prints its own errors (several lines, exit 1) unless ``HYDRA_FULL_ERROR=1``; set
    for the call (whatever the user set), they reach :func:`run_hydra`, which says them in one
    line with exit 2."""
    before = os.environ.get(FULL_ERROR_ENV)
    os.environ[FULL_ERROR_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(FULL_ERROR_ENV, None)
        else:
            os.environ[FULL_ERROR_ENV] = before


def run_hydra(stopped_by: dict[str, str]) -> None:
    """The Hydra app; every error it raises said in one line (exit 2, 130 or 143), except one
    that is neither benchreg's, Hydra's, OmegaConf's nor the file system's (a traceback)."""
    try:
        with hydra_errors_raised():
            hydra_entry()
    except BenchregError as exc:
        _fail(exc)
    except BrokenPipeError:  # the reader went away (`--help | head`): stop quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt:
        signame = stopped_by.get("signal", "SIGINT")
        logger.error(stopped_message(signame))
        sys.exit(143 if signame == "SIGTERM" else 130)
    except Exception as exc:
        error = reword(exc) or (os_error(exc) if isinstance(exc, OSError) else None)
        if error is None:
            raise
        _fail(error)


def stopped_message(signame: str) -> str:
    return (
        f"stopped by {signame}: answers so far are kept in the run folder's journal; "
        "run the same command again with the same hydra.run.dir (or hydra.sweep.dir) to "
        "resume without asking twice"
    )


TERM_GRACE_S = 20.0  # after SIGTERM, a clean stop gets this long before the process ends


def _end_after_grace() -> None:
    """A stop that has not finished its clean-up in time ends anyway, killed by the SIGTERM it
    got (its default action, exit status 143 in a shell): every answer is already in the
    journal (flushed as it arrived), so the run still resumes."""
    sys.stderr.write(f"ERROR   {stopped_message('SIGTERM')} (clean-up took too long)\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGTERM)


def _stop_on_signals() -> dict[str, str]:
    """SIGTERM stops a run the way Ctrl-C does (journal closed, system closed, exit 143), also
    when SIGINT is ignored (a background job of a shell inherits that, and keeps it), and within
    :data:`TERM_GRACE_S` whatever the clean-up does; a second SIGTERM ends it at once."""
    seen: dict[str, str] = {}

    def on_term(signum: int, frame: Any) -> None:
        seen["signal"] = "SIGTERM"
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the next SIGTERM ends the process
        watchdog = threading.Timer(TERM_GRACE_S, _end_after_grace)
        watchdog.daemon = True
        watchdog.start()
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            raise KeyboardInterrupt
        signal.raise_signal(signal.SIGINT)  # through asyncio's Ctrl-C handling when it runs

    signal.signal(signal.SIGTERM, on_term)
    return seen
