"""benchreg's sweeper: Hydra's basic sweep (the cartesian product of the overrides' values) on
Hydra's public sweeper interface, with `task=glob(...)` expanded over benchreg's registered
entries, one sweep per folder and jobs that fail alone.

- `task=glob(...)` (:mod:`~hydra_plugins.benchreg_sweeper.tasks`): a glob that matches nothing
  stops the sweep with one line and exit code 2.
- The sweep folder is claimed (:func:`benchreg.app.sweepfolder.claim_sweep`: the planned jobs in
  `sweep.json`, the same sweep again resumes it, another one is refused) and its config saved,
  redacted, as `multirun.yaml`.
- Anything wrong with one job (an unknown task name, a malformed entry, an override Hydra cannot
  compose such as `model=bogus`) fails only that job: it is listed with its error in the summary
  while the others run, and the sweep exits 2 at the end.
- The jobs run on the configured launcher (``hydra/launcher``: Hydra's basic launcher, one job
  after the other in this process, unless another is chosen, e.g. ``hydra/launcher=joblib``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.plugins import Plugins
from hydra.core.utils import JobReturn
from hydra.plugins.launcher import Launcher
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig

from hydra_plugins.benchreg_sweeper.compose import JobConfigs
from hydra_plugins.benchreg_sweeper.jobs import Job, covering_jobs, job_batches
from hydra_plugins.benchreg_sweeper.settings import BenchregSweeperConf
from hydra_plugins.benchreg_sweeper.tasks import expand_task_overrides

__all__ = ["BenchregSweeper", "BenchregSweeperConf", "covering_jobs", "expand_task_overrides"]


class BenchregSweeper(Sweeper):
    def __init__(self, max_batch_size: int | None = None, params: Any = None) -> None:
        super().__init__()
        self.max_batch_size = max_batch_size
        self.params: dict[str, str] = dict(params or {})
        self.hydra_context: HydraContext | None = None
        self.config: DictConfig | None = None
        self.launcher: Launcher | None = None
        self._configs: JobConfigs | None = None

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.hydra_context = hydra_context
        self.config = config
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )

    def sweep(self, arguments: list[str]) -> list[Sequence[JobReturn]]:
        from benchreg.app.sweepfolder import claim_sweep, release, write_multirun_yaml

        assert self.config is not None and self.launcher is not None
        batches = self.job_batches([*(f"{k}={v}" for k, v in self.params.items()), *arguments])
        sweep_dir = Path(self.config.hydra.sweep.dir)  # resolved once: `${now:...}` is cached
        lock = claim_sweep(sweep_dir, [job for batch in batches for job in batch])
        try:
            write_multirun_yaml(self.config, sweep_dir)
            returns: list[Sequence[JobReturn]] = []
            first = 0
            for batch in batches:
                results = self.launcher.launch(self.mark_bad_jobs(batch), initial_job_idx=first)
                for result in results:
                    _ = result.return_value  # a job that raised raises here, as in Hydra's
                first += len(batch)
                returns.append(results)
            return returns
        finally:
            release(lock)

    def job_batches(self, arguments: list[str]) -> list[list[Job]]:
        """Every job's overrides, in batches, `task=glob(...)` expanded first."""
        from benchreg.app.config import searchpath_folders
        from benchreg.core.entries import task_folders

        assert self.config is not None and self.hydra_context is not None
        folders = task_folders(searchpath_folders(self.config.hydra.searchpath))
        expanded = expand_task_overrides(arguments, folders)
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        return job_batches(parser.parse_overrides(expanded), self.max_batch_size)

    def mark_bad_jobs(self, batch: Sequence[Sequence[str]]) -> list[Job]:
        """The batch, checked as Hydra's sweepers check theirs (each distinct override composed
        once: :func:`covering_jobs`); a job with an override that cannot be composed keeps its
        place (and number) but runs without that override and fails at once with its error."""
        from benchreg.app.main import JOB_ERROR_KEY, encode_job_error

        jobs = [list(job) for job in batch]
        errors: dict[tuple[str, ...], str | None] = {}

        def error(job: Sequence[str]) -> str | None:
            key = tuple(job)
            if key not in errors:
                errors[key] = self.compose_error(job)
            return errors[key]

        if all(error(job) is None for job in covering_jobs(jobs)):
            return jobs  # the common case
        out = []
        for job in jobs:
            message = error(job)
            if message is None:
                out.append(job)
                continue
            culprits = [o for o in job if error([x for x in job if x != o]) is None]
            kept = [o for o in job if o not in culprits[:1]] if culprits else []
            out.append([*kept, f"+{JOB_ERROR_KEY}={encode_job_error(message)}"])
        return out

    def job_configs(self) -> JobConfigs:
        """The launcher's job configs (benchreg's launcher), else the sweeper's own."""
        assert self.hydra_context is not None and self.config is not None
        configs = getattr(self.launcher, "configs", None)
        if isinstance(configs, JobConfigs):
            return configs
        if self._configs is None:
            self._configs = JobConfigs(self.hydra_context.config_loader, self.config)
        return self._configs

    def compose_error(self, overrides: Sequence[str]) -> str | None:
        """What composing a job with ``overrides`` says, in one line (None: it composes). With
        benchreg's launcher, through its job configs: the jobs checked here are launched from
        the same compositions."""
        from benchreg.app.errors import reword

        assert self.hydra_context is not None and self.config is not None
        try:
            self.job_configs()(list(overrides))
        except Exception as exc:
            error = reword(exc)
            return error.message if error is not None else f"{type(exc).__name__}: {exc}"
        return None
