"""Hydra's basic sweeper, with `task=glob(...)` expanded over benchreg's registered entries.

`task` is a plain string, not a config group, so Hydra cannot expand a glob over it: this sweeper
matches it against :func:`benchreg.core.tasks.list_tasks` (nested names such as `molp2s/*`; entries
or folders starting with `_` and aliases never match) and checks every swept task name before any
job starts, so a typo or an empty glob stops the sweep with one line and exit code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import ChoiceSweep, Glob

TASK_KEY = "task"


class BenchregSweeper(BasicSweeper):
    def sweep(self, arguments: list[str]) -> Any:
        from loguru import logger

        from benchreg.app.config import searchpath_folders
        from benchreg.core.errors import BenchregError
        from benchreg.core.tasks import task_folders

        assert self.config is not None
        folders = task_folders(searchpath_folders(self.config.hydra.searchpath))
        try:
            expanded = expand_task_overrides(arguments, folders)
        except BenchregError as exc:
            logger.error(exc.message)
            sys.exit(exc.exit_code)
        from benchreg.app.sweepfolder import claim_sweep, release

        sweep_dir = Path(self.config.hydra.sweep.dir)
        try:
            lock = claim_sweep(sweep_dir, self.planned_jobs(expanded))
        except BenchregError as exc:
            logger.error(exc.message)
            sys.exit(exc.exit_code)
        # The basic sweeper saves its config as multirun.yaml: save a redacted one instead.
        config = self.config
        self.config = _redacted(config)
        try:
            return super().sweep(expanded)
        finally:
            self.config = config
            release(lock)

    def planned_jobs(self, arguments: list[str]) -> list[list[str]]:
        """Every job's overrides, as the basic sweeper will launch them."""
        assert self.hydra_context is not None
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        overrides = parser.parse_overrides([*self._parse_config(), *arguments])
        batches = self.split_arguments(overrides, None)
        return [list(job) for batch in batches for job in batch]

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        # The launcher composes every job again; composing each distinct override once is enough.
        super().validate_batch_is_legal(covering_jobs(batch))


def expand_task_overrides(arguments: list[str], folders: list[Path]) -> list[str]:
    """Replace `task=glob(...)` by the matching names; every task name must resolve."""
    from benchreg.core.tasks import find_task_file, list_tasks, unknown_task

    parser = OverridesParser.create()
    expanded: list[str] = []
    for text, override in zip(arguments, parser.parse_overrides(arguments), strict=True):
        if override.key_or_group != TASK_KEY or override.is_delete():
            expanded.append(text)
            continue
        value = override.value()
        names: list[str] = []
        if isinstance(value, Glob):
            known = list_tasks(folders)
            names = value.filter(known)
            if not names:
                raise empty_glob(text, value, known)
            text = f"{override.get_key_element()}={','.join(names)}"
        elif isinstance(value, ChoiceSweep):
            names = [str(getattr(item, "text", item)) for item in value.list]
        elif isinstance(value, str):
            names = [value]
        for name in names:
            if find_task_file(name, folders) is None:
                raise unknown_task(name, folders)
        expanded.append(text)
    return expanded


def empty_glob(text: str, glob: Glob, known: list[str]) -> Exception:
    from benchreg.core.errors import BenchregError
    from benchreg.core.tasks import nearest

    groups = sorted({f"{name.split('/')[0]}/*" for name in known})
    near = [name for pattern in glob.include for name in nearest(pattern, [*groups, *known])]
    hint = f"nearest: {', '.join(near)}; " if near else ""
    return BenchregError(
        f"{text!r} matches no task", fix=f"{hint}`python -m benchreg tasks` lists them"
    )


def covering_jobs(batch: Sequence[Sequence[str]]) -> list[Sequence[str]]:
    """The jobs of ``batch`` that bring an override not seen in an earlier job."""
    seen: set[str] = set()
    chosen = []
    for job in batch:
        if not seen.issuperset(job):
            chosen.append(job)
            seen.update(job)
    return chosen


def _redacted(config: Any) -> Any:
    from omegaconf import OmegaConf

    from benchreg.core.provenance import redact, redact_override

    plain = OmegaConf.to_container(config, resolve=False)
    safe = redact(plain)
    overrides = safe.get("hydra", {}).get("overrides", {})
    for key in ("task", "hydra"):
        if isinstance(overrides.get(key), list):
            overrides[key] = [redact_override(str(o)) for o in overrides[key]]
    job = safe.get("hydra", {}).get("job", {})
    if isinstance(job.get("override_dirname"), str):
        job["override_dirname"] = ",".join(
            redact_override(o) for o in job["override_dirname"].split(",")
        )
    return OmegaConf.create(safe)
