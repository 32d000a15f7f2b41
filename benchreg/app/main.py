"""The Hydra entry point: compose a task, run it, write its outputs."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from loguru import logger
from omegaconf import DictConfig, OmegaConf

from benchreg.app.config import run_options, task_spec, to_dict
from benchreg.core.errors import BenchregError
from benchreg.core.records import write_error, write_run
from benchreg.core.report import run_table
from benchreg.core.run import (
    data_root_for,
    load_context,
    load_dataset,
    run_task,
    run_validators,
)
from benchreg.resources import conf_dir

_state = {"failures": 0}


def _slug(*parts: Any) -> str:
    return "_".join(str(p).replace("/", "-") for p in parts if p not in (None, "", "None"))


OmegaConf.register_new_resolver("benchreg_slug", _slug, replace=True)


@hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")
def hydra_entry(cfg: DictConfig) -> dict[str, Any]:
    hydra_cfg = HydraConfig.get()
    out_dir = Path(hydra_cfg.runtime.output_dir)
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    task_name = str(hydra_cfg.runtime.choices.get("task"))
    try:
        spec, _ = task_spec(cfg)
        if cfg.get("mode", "run") == "validate":
            return {"validate": validate(spec, cfg)}
        result = run_task(
            spec,
            view=cfg.get("view"),
            system_cfg=to_dict(cfg.model),
            roots=to_dict(cfg.roots),
            options=run_options(cfg),
        )
        record = write_run(out_dir, result, to_dict(cfg))
        print(run_table(record))
        print(f"outputs: {out_dir}")
        return {"record": record}
    except BenchregError as exc:
        logger.error(exc.message)
        if not multirun:
            sys.exit(exc.exit_code)
        message = exc.message
    except Exception as exc:
        if not multirun:
            raise
        message = f"{type(exc).__name__}: {exc}"
        logger.error(f"job failed: {message}\n{traceback.format_exc()}")
    _state["failures"] += 1
    write_error(out_dir, task_name, cfg.get("view"), cfg.model.get("name"), message)
    return {"error": message}


def validate(spec: Any, cfg: DictConfig) -> dict[str, Any]:
    from benchreg.core.io import atomic_write_json

    view = spec.resolve_view(cfg.get("view"))
    root = data_root_for(spec, to_dict(cfg.roots))
    dataset = load_dataset(spec, view, root)
    findings = run_validators(spec, dataset, load_context(spec, view, root))
    for finding in findings:
        print(f"{finding.severity}: {finding}")
    errors = sum(1 for f in findings if f.severity == "error")
    print(
        f"{spec.name}: {len(dataset.samples)} records checked, {errors} errors, "
        f"{len(findings) - errors} warnings ({len(spec.validators)} validators)"
    )
    report = {
        "task": spec.name,
        "view": view,
        "records": len(dataset.samples),
        "findings": [
            {"where": f.where, "message": f.message, "severity": f.severity} for f in findings
        ],
    }
    atomic_write_json(Path(HydraConfig.get().runtime.output_dir) / "validation.json", report)
    return report


def main() -> None:
    logger.remove()
    logger.add(sys.stderr, level="INFO", format="<level>{level: <7}</level> {message}")
    hydra_entry()
    if _state["failures"]:
        sys.exit(2)
