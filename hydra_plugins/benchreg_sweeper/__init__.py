"""Hydra's basic sweeper, with `task=glob(...)` expanded over benchreg's registered entries.

`task` is a plain string, not a config group, so Hydra cannot expand a glob over it: this
sweeper matches it against :func:`benchreg.core.entries.list_tasks` (nested names such as
`molp2s/*`; entries or folders starting with `_` and aliases never match). A glob that matches
nothing stops the sweep with one line and exit code 2; anything wrong with one job (an unknown
task name, a malformed entry, an override Hydra cannot compose such as `model=bogus`) fails only
that job: it is listed with its error in the summary while the others run, and the sweep exits 2
at the end.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Glob

from hydra_plugins.benchreg_sweeper.settings import BenchregSweeperConf

__all__ = ["BenchregSweeper", "BenchregSweeperConf"]

TASK_KEY = "task"


class BenchregSweeper(BasicSweeper):
    def __init__(
        self,
        max_batch_size: int | None,
        params: dict[str, str] | None = None,
        workers: Any = "auto",
    ) -> None:
        super().__init__(max_batch_size, params)
        self.workers = workers

    def setup(self, *, hydra_context: Any, task_function: Any, config: Any) -> None:
        """Hydra's setup; the basic (in-process) launcher is replaced by the same launcher with
        fewer copies of each job's config (:class:`~hydra_plugins.benchreg_sweeper.launch.
        LeanLauncher`); any other launcher (joblib, submitit, ...) is used as it is."""
        super().setup(hydra_context=hydra_context, task_function=task_function, config=config)
        from hydra._internal.core_plugins.basic_launcher import BasicLauncher

        if type(self.launcher) is BasicLauncher:
            from hydra_plugins.benchreg_sweeper.launch import LeanLauncher

            lean = LeanLauncher()
            lean.workers = checked_workers(self.workers)
            lean.setup(hydra_context=hydra_context, task_function=task_function, config=config)
            self.launcher = lean

    def sweep(self, arguments: list[str]) -> Any:
        from loguru import logger

        from benchreg.app.config import searchpath_folders
        from benchreg.core.entries import task_folders
        from benchreg.core.errors import BenchregError

        assert self.config is not None
        folders = task_folders(searchpath_folders(self.config.hydra.searchpath))
        try:
            expanded = expand_task_overrides(arguments, folders)
        except BenchregError as exc:
            logger.error(exc.message)
            sys.exit(exc.exit_code)
        from benchreg.app.sweepfolder import claim_sweep, release

        sweep_dir = Path(self.config.hydra.sweep.dir)  # resolved once: `${now:...}` is cached
        try:
            lock = claim_sweep(sweep_dir, self.planned_jobs(expanded))
        except BenchregError as exc:
            logger.error(exc.message)
            sys.exit(exc.exit_code)
        # The basic sweeper saves its config as multirun.yaml: save a redacted one instead, with
        # the sweep folder written out (re-resolving `${now:...}` could name the next second).
        config = self.config
        self.config = _redacted(config, sweep_dir)
        self._launch_config = config
        memo = self._share_compositions()
        try:
            return super().sweep(expanded)
        finally:
            if memo:
                del self.hydra_context.config_loader.load_sweep_config  # type: ignore[union-attr]
            self.config = config
            release(lock)

    _launch_config: Any = None  # the config the launcher composes jobs from (not redacted)
    _composed: dict[tuple[str, ...], Any] | None = None
    _cache: Any = None  # the ComposeCache of this sweep

    def _share_compositions(self) -> bool:
        """With the in-process launcher, a job config composed by :meth:`_compose_error` is
        handed to the launcher instead of being composed a second time (each job's config is
        composed once), and jobs that differ only in plain values are copies of one Hydra
        composition (:class:`~hydra_plugins.benchreg_sweeper.compose.ComposeCache`).
        Out-of-process launchers compose in their workers: nothing shared."""
        from hydra._internal.core_plugins.basic_launcher import BasicLauncher

        from hydra_plugins.benchreg_sweeper.launch import LeanLauncher

        if type(self.launcher) not in (BasicLauncher, LeanLauncher) or self.hydra_context is None:
            return False
        from hydra_plugins.benchreg_sweeper.compose import ComposeCache

        loader = self.hydra_context.config_loader
        self._cache = compose = ComposeCache(loader, loader.load_sweep_config)
        self._composed = composed = {}

        def load_sweep_config(master_config: Any, sweep_overrides: list[str]) -> Any:
            # in place: both in-process launchers copy what they keep of a job's config before
            # the next one is composed (ComposeCache)
            key = tuple(sweep_overrides)
            if master_config is self._launch_config and key in composed:
                return composed.pop(key)
            return compose(master_config, sweep_overrides, in_place=True)

        loader.load_sweep_config = load_sweep_config  # type: ignore[method-assign]
        return True

    def planned_jobs(self, arguments: list[str]) -> list[list[str]]:
        """Every job's overrides, as the basic sweeper will launch them."""
        assert self.hydra_context is not None
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        overrides = parser.parse_overrides([*self._parse_config(), *arguments])
        batches = self.split_arguments(overrides, None)
        return [list(job) for batch in batches for job in batch]

    _checked: Sequence[Sequence[str]] | None = None  # the last batch mark_bad_jobs composed

    def get_job_batch(self) -> Sequence[Sequence[str]]:
        """The next batch, where a job with an override that cannot be composed keeps its place
        (and number) but runs without that override and fails at once with its error."""
        self._checked = self.mark_bad_jobs(super().get_job_batch())
        return self._checked

    def mark_bad_jobs(self, batch: Sequence[Sequence[str]]) -> list[list[str]]:
        from benchreg.app.main import JOB_ERROR_KEY, encode_job_error

        jobs = [list(job) for job in batch]
        if all(self._compose_error(job) is None for job in covering_jobs(jobs)):
            return jobs  # the common case: each distinct override composed once
        out = []
        for job in jobs:
            message = self._compose_error(job)
            if message is None:
                out.append(job)
                continue
            culprits = [o for o in job if self._compose_error([x for x in job if x != o]) is None]
            kept = [o for o in job if o not in culprits[:1]] if culprits else []
            out.append([*kept, f"+{JOB_ERROR_KEY}={encode_job_error(message)}"])
        return out

    def _compose_error(self, overrides: list[str]) -> str | None:
        from benchreg.app.errors import reword

        assert self.hydra_context is not None and self.config is not None
        shared = self._composed is not None
        master = self._launch_config if shared else self.config
        try:
            composed = self.hydra_context.config_loader.load_sweep_config(master, overrides)
        except Exception as exc:
            error = reword(exc)
            return error.message if error is not None else f"{type(exc).__name__}: {exc}"
        if self._composed is not None and not (self._cache is not None and self._cache.shared):
            self._composed[tuple(overrides)] = composed  # a template is derived again at launch
        return None

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        if batch is self._checked:
            return  # get_job_batch composed each distinct override of this batch already
        # The launcher composes every job again; composing each distinct override once is enough.
        super().validate_batch_is_legal(covering_jobs(batch))


def checked_workers(setting: Any) -> Any:
    """``hydra.sweeper.workers``: ``auto`` or a positive integer (processes per batch of the
    in-process launcher)."""
    from benchreg.core.errors import BenchregError

    if setting == "auto":
        return setting
    if isinstance(setting, int) and not isinstance(setting, bool) and setting >= 1:
        return setting
    raise BenchregError(
        f"hydra.sweeper.workers={setting!r} is neither auto nor a positive integer",
        where="override hydra.sweeper.workers",
        fix="use hydra.sweeper.workers=auto (parallel for predictions, baseline and random "
        "models), 1 (one process) or a number of processes",
    )


def expand_task_overrides(arguments: list[str], folders: list[Path]) -> list[str]:
    """Replace `task=glob(...)` by the matching names (an empty glob is an error; an unknown
    plain name is left to its own job, which fails naming the nearest entries)."""
    from benchreg.core.entries import list_tasks

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
        expanded.append(text)
    return expanded


def empty_glob(text: str, glob: Glob, known: list[str]) -> Exception:
    from benchreg.core.entries import nearest
    from benchreg.core.errors import BenchregError

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


def _redacted(config: Any, sweep_dir: Path | None = None) -> Any:
    from omegaconf import OmegaConf

    from benchreg.core.provenance import redact, redact_override

    plain = OmegaConf.to_container(config, resolve=False)
    safe = redact(plain)
    if sweep_dir is not None:
        safe.setdefault("hydra", {}).setdefault("sweep", {})["dir"] = str(sweep_dir)
    overrides = safe.get("hydra", {}).get("overrides", {})
    for key in ("task", "hydra"):
        if isinstance(overrides.get(key), list):
            overrides[key] = [redact_override(str(o)) for o in overrides[key]]
    job = safe.get("hydra", {}).get("job", {})
    if isinstance(job.get("override_dirname"), str):
        job["override_dirname"] = ",".join(
            redact_override(o) for o in job["override_dirname"].split(",")
        )
    redacted = OmegaConf.create(safe)
    OmegaConf.copy_cache(from_config=config, to_config=redacted)
    return redacted
