"""The Hydra entry point: resolve the task, do what `mode=` asks, record failures."""

from __future__ import annotations

import contextlib
import signal
import sys
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from loguru import logger
from omegaconf import DictConfig, OmegaConf

from benchreg.app import modes
from benchreg.app.callbacks import SWEEP_RESULT
from benchreg.app.config import mode, register_family_roots, task_spec
from benchreg.core.errors import BenchregError
from benchreg.core.records import write_error
from benchreg.resources import conf_dir

_state = {"failures": 0}


def _slug(*parts: Any) -> str:
    return "_".join(str(p).replace("/", "-") for p in parts if p not in (None, "", "None"))


OmegaConf.register_new_resolver("benchreg_slug", _slug, replace=True)
register_family_roots()


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
    selected = mode(cfg)
    spec = task_spec(cfg, searchpath)
    if selected == "validate":
        report = modes.validate(spec, cfg, out_dir)
        return {"validate": report, "failed": report["errors"] > 0}
    if selected == "prompts":
        return {"prompts": str(modes.prompts(spec, cfg, out_dir)), "failed": False}
    return {"record": modes.run(spec, cfg, out_dir, multirun=multirun), "failed": False}


@hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")
def hydra_entry(cfg: DictConfig) -> dict[str, Any]:
    hydra_cfg = HydraConfig.get()
    out_dir = Path(hydra_cfg.runtime.output_dir)
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    try:
        result = run_job(cfg, out_dir, hydra_cfg.searchpath, multirun=multirun)
        _state["failures"] += int(result["failed"])
        return result
    except BenchregError as exc:
        logger.error(exc.message)
        if not multirun:
            _drop_if_empty(out_dir)
            sys.exit(exc.exit_code)
        message = exc.message
    except Exception as exc:
        if not multirun:
            raise
        message = f"{type(exc).__name__}: {exc}"
        logger.error(f"job failed: {message}\n{traceback.format_exc()}")
    _state["failures"] += 1
    write_error(out_dir, cfg.get("task"), cfg.get("view"), cfg.model.get("name"), message)
    return {"error": message, "failed": True}


def _drop_if_empty(out_dir: Path) -> None:
    """A run stopped by bad input leaves no empty run folder behind."""
    with contextlib.suppress(OSError):
        out_dir.rmdir()


def main() -> None:
    logger.remove()
    logger.add(sys.stderr, level="INFO", format="<level>{level: <7}</level> {message}")
    try:
        reject_task_group_folders(sys.argv[1:])
    except BenchregError as exc:
        logger.error(exc.message)
        sys.exit(exc.exit_code)
    stopped_by = _stop_on_signals()
    try:
        hydra_entry()
    except KeyboardInterrupt:
        signame = stopped_by.get("signal", "SIGINT")
        logger.error(
            f"stopped by {signame}: answers so far are kept in the run folder's journal; "
            "run the same command again with the same hydra.run.dir (or hydra.sweep.dir) to "
            "resume without asking twice"
        )
        sys.exit(143 if signame == "SIGTERM" else 130)
    if _state["failures"] or SWEEP_RESULT.get("not_ok"):
        sys.exit(2)


def _stop_on_signals() -> dict[str, str]:
    """SIGTERM stops a run the way Ctrl-C does (journal closed, system closed, exit 143)."""
    seen: dict[str, str] = {}

    def on_term(signum: int, frame: Any) -> None:
        seen["signal"] = "SIGTERM"
        signal.raise_signal(signal.SIGINT)

    signal.signal(signal.SIGTERM, on_term)
    return seen
