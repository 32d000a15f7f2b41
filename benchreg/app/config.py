"""From the composed Hydra config to core objects (task spec with file:line errors, options)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from benchreg.core.errors import BenchregError
from benchreg.core.run import RunOptions
from benchreg.core.spec import TaskSpec
from benchreg.core.tasks import compose_entry, find_task_file, spec_from_mapping


def to_dict(node: Any) -> dict[str, Any]:
    return OmegaConf.to_container(node, resolve=True) or {}  # type: ignore[return-value]


def task_folders_from_hydra() -> list[Path]:
    """The folders Hydra searched, in order, that can hold task entries."""
    folders = []
    for source in HydraConfig.get().runtime.config_sources:
        if source.schema in ("benchreg-tasks", "file"):
            folders.append(Path(source.path))
    return folders


def task_spec(cfg: DictConfig) -> tuple[TaskSpec, list[Path]]:
    """Validate the composed `task` node; errors point at the entry file (or its base)."""
    choice = HydraConfig.get().runtime.choices.get("task")
    folders = task_folders_from_hydra()
    path = find_task_file(str(choice), folders) if choice else None
    sources = compose_entry(path, folders)[1] if path else []
    if "task" not in cfg or cfg.task is None:
        raise BenchregError("no task selected", fix="add task=<family>/<name>")
    return spec_from_mapping(to_dict(cfg.task), sources), sources


def run_options(cfg: DictConfig) -> RunOptions:
    run = cfg.get("run", {})
    return RunOptions(
        batch_size=int(run.get("batch_size", 64)),
        limit=run.get("limit"),
        n_boot=int(run.get("bootstrap", 1000)),
        seed=int(run.get("seed", 0)),
        progress=bool(run.get("progress", True)),
    )
