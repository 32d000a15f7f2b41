"""From the composed Hydra config to core objects: the task spec, its folders, run options.

`task` is a plain string in the config; the core composer (:func:`benchreg.core.tasks.load_task`)
turns it into a spec. Hydra composes only the app config (model, roots, run options).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from benchreg.core.errors import BenchregError
from benchreg.core.run import RunOptions
from benchreg.core.spec import TaskSpec

MODES = ("run", "validate", "prompts")


def register_family_roots() -> None:
    """The `roots` config node: one key per registered family (null = its embedded sample), so
    `roots.<family>=<dir>` works for every family, including ones added by other packages."""
    from hydra.core.config_store import ConfigStore

    from benchreg.core.family import all_families

    roots = {family.name: None for family in all_families()}
    ConfigStore.instance().store(group="roots", name="families", node=roots)


def to_dict(node: Any) -> dict[str, Any]:
    return OmegaConf.to_container(node, resolve=True) or {}  # type: ignore[return-value]


def searchpath_folders(searchpath: Iterable[str] | None) -> list[Path]:
    """The `file://` entries of `hydra.searchpath` (entries at `<dir>/tasks/<group>/<name>`)."""
    folders = []
    for entry in searchpath or ():
        text = str(entry)
        if text.startswith("file://"):
            folders.append(Path(text.removeprefix("file://")).expanduser().resolve())
    return folders


def task_name(cfg: DictConfig) -> str:
    name = cfg.get("task")
    if not isinstance(name, str) or not name.strip():
        raise BenchregError("no task selected", fix="add task=<family>/<name>")
    return name.strip()


def task_spec(cfg: DictConfig, searchpath: Iterable[str] = ()) -> TaskSpec:
    """Compose and validate the selected entry; errors point at the entry file (or its base)."""
    from benchreg.core.tasks import load_task

    return load_task(task_name(cfg), searchpath_folders(searchpath))


def mode(cfg: DictConfig) -> str:
    value = str(cfg.get("mode", "run"))
    if value not in MODES:
        raise BenchregError(f"unknown mode {value!r}", fix=f"choose one of {', '.join(MODES)}")
    return value


def run_options(cfg: DictConfig) -> RunOptions:
    run = cfg.get("run", {})
    cache_dir = run.get("cache_dir")
    return RunOptions(
        batch_size=int(run.get("batch_size", 64)),
        limit=run.get("limit"),
        n_boot=int(run.get("bootstrap", 1000)),
        seed=int(run.get("seed", 0)),
        progress=bool(run.get("progress", True)),
        cache=str(run.get("cache", "read_write")),
        cache_dir=str(cache_dir) if cache_dir else None,
        overwrite=bool(run.get("overwrite", False)),
        final=bool(run.get("final", False)),
    )
