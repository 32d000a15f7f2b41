"""The Hydra entry point: resolve the task, do what `mode=` asks, record failures."""

from __future__ import annotations

import base64
import contextlib
import functools
import logging
import os
import secrets
import signal
import sys
import threading
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from loguru import logger
from omegaconf import DictConfig, OmegaConf

from benchreg.app import lifetime, logs, modes
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
from benchreg.core.provenance import redact, redact_override, redact_text
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


def _importers() -> str:
    """The registered importers' names, for the --help text."""
    from benchreg.core import registry

    return ", ".join(registry.importers.names()) or "(none registered)"


OmegaConf.register_new_resolver("benchreg_importers", _importers, replace=True)
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
    if not multirun:
        lifetime.keep_until_exit(task)
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
    lifetime.start_up_done()
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


def _save_redacted(cfg: Any, filename: str, output_dir: Path) -> None:
    """Hydra's `.hydra/` copies (hydra.output_subdir), written with secrets redacted."""
    output_dir.mkdir(parents=True, exist_ok=True)
    plain = OmegaConf.to_container(cfg, resolve=False)
    if isinstance(plain, list):
        safe: Any = [redact_override(str(item)) for item in plain]
    else:
        safe = redact(plain)
        job = safe.get("job") if isinstance(safe, dict) else None
        if isinstance(job, dict) and isinstance(job.get("override_dirname"), str):
            job["override_dirname"] = ",".join(
                redact_override(o) for o in job["override_dirname"].split(",")
            )
        overrides = safe.get("overrides") if isinstance(safe, dict) else None
        for key in ("task", "hydra"):
            if isinstance(overrides, dict) and isinstance(overrides.get(key), list):
                overrides[key] = [redact_override(str(o)) for o in overrides[key]]
    with open(output_dir / filename, "w", encoding="utf-8") as handle:
        handle.write(OmegaConf.to_yaml(OmegaConf.create(safe)))


def _raise_through(func: Any) -> Any:
    """Replaces Hydra's `run_and_report` (which prints multi-line errors and exits 1): errors
    reach :func:`main`, which words them in one line."""
    return func()


# Command-line flags that choose another primary config or add config folders: with them, any
# config may set `hydra.mode`, so Hydra's own look-up runs.
CONFIG_FLAGS = ("--config-name", "-cn", "--config-path", "-cp", "--config-dir", "-cd")


def mode_is_unset(overrides: Iterable[str], argv: Iterable[str] = ()) -> bool:
    """Whether `hydra.mode` is provably unset for these overrides: no override sets it or
    selects a `hydra/...` config (which could), no search path or config flag brings in other
    configs, and benchreg's own configs never set it (a test composes them to check). Then
    Hydra's `get_mode`, a whole composition only to read that key, returns None."""
    if any(arg.split("=", 1)[0] in CONFIG_FLAGS for arg in argv):
        return False
    for override in overrides:
        key = override.split("=", 1)[0].lstrip("+~")
        if key == "hydra" or key.startswith(("hydra/", "hydra.mode", "hydra.searchpath")):
            return False
    return True


def _composing_get_mode_only_when_needed(get_mode: Any) -> Any:
    @functools.wraps(get_mode)
    def guarded(self: Any, config_name: str | None, overrides: list[str]) -> Any:
        if config_name == "config" and mode_is_unset(overrides, sys.argv[1:]):
            return None  # Hydra's answer for an unset mode: RUN, or MULTIRUN with -m
        return get_mode(self, config_name, overrides)

    guarded.benchreg_guarded = True  # type: ignore[attr-defined]
    return guarded


def install_hydra_guards() -> None:
    import hydra._internal.hydra as hydra_app
    import hydra._internal.utils as hydra_utils
    import hydra.core.utils as hydra_core_utils

    if not os.environ.get("HYDRA_FULL_ERROR"):
        hydra_utils.run_and_report = _raise_through
    if not getattr(hydra_app.Hydra.get_mode, "benchreg_guarded", False):
        hydra_app.Hydra.get_mode = _composing_get_mode_only_when_needed(hydra_app.Hydra.get_mode)
    hydra_core_utils._save_config = _save_redacted  # type: ignore[assignment]
    previous = logging.getLogRecordFactory()
    if getattr(previous, "benchreg_redacts", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if record.name.startswith("hydra"):
            record.msg, record.args = redact_text(record.getMessage()), None
        return record

    factory.benchreg_redacts = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


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
    logs.setup()
    if not sys.argv[1:]:
        logger.info(default_job_note())
    try:
        reject_task_group_folders(sys.argv[1:])
        reject_secret_overrides(sys.argv[1:])
    except BenchregError as exc:
        _fail(exc)
    install_hydra_guards()
    sys.argv[1:] = with_family_groups(sys.argv[1:])
    os.environ[UID_ENV] = secrets.token_hex(3)
    stopped_by = _stop_on_signals()
    try:
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
    if _state["failures"] or SWEEP_RESULT.get("not_ok"):
        sys.exit(2)


def stopped_message(signame: str) -> str:
    return (
        f"stopped by {signame}: answers so far are kept in the run folder's journal; "
        "run the same command again with the same hydra.run.dir (or hydra.sweep.dir) to "
        "resume without asking twice"
    )


TERM_GRACE_S = 20.0  # after SIGTERM, a clean stop gets this long before the process exits


def _exit_after_grace() -> None:
    """A stop that has not finished its clean-up in time exits anyway: every answer is already
    in the journal (flushed as it arrived), so the run still resumes."""
    sys.stderr.write(f"ERROR   {stopped_message('SIGTERM')} (clean-up took too long)\n")
    sys.stderr.flush()
    os._exit(143)


def _stop_on_signals() -> dict[str, str]:
    """SIGTERM stops a run the way Ctrl-C does (journal closed, system closed, exit 143), also
    when SIGINT is ignored (a background job of a shell inherits that, and keeps it), and within
    :data:`TERM_GRACE_S` whatever the clean-up does."""
    seen: dict[str, str] = {}

    def on_term(signum: int, frame: Any) -> None:
        if "signal" not in seen:
            watchdog = threading.Timer(TERM_GRACE_S, _exit_after_grace)
            watchdog.daemon = True
            watchdog.start()
        seen["signal"] = "SIGTERM"
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            raise KeyboardInterrupt
        signal.raise_signal(signal.SIGINT)  # through asyncio's Ctrl-C handling when it runs

    signal.signal(signal.SIGTERM, on_term)
    return seen
