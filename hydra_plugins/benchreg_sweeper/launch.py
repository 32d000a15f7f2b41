"""Hydra's in-process launcher with fewer copies of each job's config.

Hydra's ``run_job`` (hydra-core 1.3) copies a job's config four times: the ``hydra`` node twice
for :class:`HydraConfig` (before and after it sets ``hydra.runtime.output_dir``), the whole
config once for the task function (then deletes its ``hydra`` node), and the ``hydra`` node once
more for the job's return. In a sweep of small jobs that is most of the per-job cost.
:func:`run_job` does the same with one copy of the ``hydra`` node and one of the rest:

- the second :meth:`HydraConfig.set_config` copies a config that differs from the first copy only
  in ``hydra.runtime.output_dir``: that value is set on the first copy instead;
- the task function's config is a copy of every node but ``hydra`` (flags and resolver cache
  copied as a deep copy keeps them), not a copy of all of it with ``hydra`` deleted;
- the job's ``hydra_cfg`` is the :class:`HydraConfig` copy of this job itself (never changed
  after it is set; the next job's is a new one), not a copy of it.

Everything else (callbacks, logging, ``chdir``, ``env_set``, ``output_subdir``, the return) is
Hydra's own code path. tests/app/test_sweeper.py runs jobs both ways and compares what the task
function, :class:`HydraConfig` and the callbacks see. :class:`LeanLauncher` is the basic launcher
with this ``run_job``; the sweeper uses it only in place of the basic launcher itself.
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra._internal.core_plugins.basic_launcher import BasicLauncher
from hydra.core import utils as hydra_utils
from hydra.core.hydra_config import HydraConfig
from hydra.core.utils import JobReturn, JobRuntime, JobStatus, env_override
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from hydra_plugins.benchreg_sweeper.forked import run_forked, sweep_processes

HYDRA_KEY = "hydra"
log = logging.getLogger("hydra._internal.core_plugins.basic_launcher")  # the basic launcher's


def task_config(config: DictConfig) -> DictConfig:
    """``copy.deepcopy(config)`` with its ``hydra`` node deleted, without copying that node."""
    keys = [key for key in config.keys() if key != HYDRA_KEY]  # noqa: SIM118 (DictConfig)
    out = OmegaConf.masked_copy(config, keys)
    out.__dict__["_metadata"] = copy.deepcopy(config._metadata)  # flags, resolver cache, types
    return out


def run_job(
    task_function: TaskFunction,
    config: DictConfig,
    job_dir_key: str,
    job_subdir_key: str | None,
    hydra_context: HydraContext,
    configure_logging: bool = True,
) -> JobReturn:
    """:func:`hydra.core.utils.run_job` with fewer copies (see the module)."""
    hydra_utils._check_hydra_context(hydra_context)
    callbacks = hydra_context.callbacks
    old_cwd = os.getcwd()
    orig_hydra_cfg = HydraConfig.instance().cfg
    HydraConfig.instance().set_config(config)
    output_dir = str(OmegaConf.select(config, job_dir_key))
    if job_subdir_key is not None:
        subdir = str(OmegaConf.select(config, job_subdir_key))
        output_dir = os.path.join(output_dir, subdir)
    absolute = os.path.abspath(output_dir)
    hydra_cfg = HydraConfig.instance().cfg
    assert isinstance(hydra_cfg, DictConfig)
    for node in (config, hydra_cfg):  # what the second set_config would copy
        with read_write(node.hydra.runtime), open_dict(node.hydra.runtime):
            node.hydra.runtime.output_dir = absolute
    _chdir = None
    try:
        ret = JobReturn()
        task_cfg = task_config(config)
        ret.cfg = task_cfg
        ret.hydra_cfg = hydra_cfg
        overrides = OmegaConf.to_container(config.hydra.overrides.task)
        assert isinstance(overrides, list)
        ret.overrides = overrides
        Path(str(output_dir)).mkdir(parents=True, exist_ok=True)
        _chdir = hydra_cfg.hydra.job.chdir
        if _chdir is None:  # benchreg's config sets it (false); Hydra 1.2+ defaults to false
            _chdir = False
        if _chdir:
            os.chdir(output_dir)
            ret.working_dir = output_dir
        else:
            ret.working_dir = os.getcwd()
        if configure_logging:
            hydra_utils.configure_log(config.hydra.job_logging, config.hydra.verbose)
        if config.hydra.output_subdir is not None:
            hydra_output = Path(config.hydra.runtime.output_dir) / Path(config.hydra.output_subdir)
            hydra_utils._save_config(task_cfg, "config.yaml", hydra_output)
            hydra_utils._save_config(hydra_cfg, "hydra.yaml", hydra_output)
            hydra_utils._save_config(config.hydra.overrides.task, "overrides.yaml", hydra_output)
        with env_override(hydra_cfg.hydra.job.env_set):
            callbacks.on_job_start(config=config, task_function=task_function)
            try:
                ret.return_value = task_function(task_cfg)
                ret.status = JobStatus.COMPLETED
            except Exception as e:
                ret.return_value = e
                ret.status = JobStatus.FAILED
        ret.task_name = JobRuntime.instance().get("name")
        hydra_utils._flush_loggers()
        callbacks.on_job_end(config=config, job_return=ret)
        return ret
    finally:
        HydraConfig.instance().cfg = orig_hydra_cfg
        if _chdir:
            os.chdir(old_cwd)


class LeanLauncher(BasicLauncher):
    """The basic launcher (its ``launch``, hydra-core 1.3), each job run by :func:`run_job`;
    with ``workers`` (``hydra.sweeper.workers``) above one, in that many forked processes
    (:mod:`hydra_plugins.benchreg_sweeper.forked`)."""

    workers: Any = 1

    def launch(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> Sequence[JobReturn]:
        hydra_utils.setup_globals()
        assert self.hydra_context is not None
        assert self.config is not None
        assert self.task_function is not None
        hydra_utils.configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = self.config.hydra.sweep.dir
        Path(str(sweep_dir)).mkdir(parents=True, exist_ok=True)
        log.info(f"Launching {len(job_overrides)} jobs locally")
        jobs = [(initial_job_idx + k, list(o)) for k, o in enumerate(job_overrides)]
        master_model = OmegaConf.select(self.config, "model.name", default=None)
        processes = sweep_processes(self.workers, job_overrides, master_model)
        if processes <= 1:
            return [self._run(*job) for job in jobs]
        first = self._run(*jobs[0])  # alone: it fills the data caches the others share
        return [first, *run_forked(self._run, jobs[1:], processes)]

    def _run(self, idx: int, overrides: Sequence[str]) -> JobReturn:
        assert self.hydra_context is not None
        assert self.config is not None
        assert self.task_function is not None
        lst = " ".join(hydra_utils.filter_overrides(overrides))
        log.info(f"\t#{idx} : {lst}")
        sweep_config = self.hydra_context.config_loader.load_sweep_config(
            self.config, list(overrides)
        )
        with open_dict(sweep_config):
            sweep_config.hydra.job.id = idx
            sweep_config.hydra.job.num = idx
        ret = run_job(
            hydra_context=self.hydra_context,
            task_function=self.task_function,
            config=sweep_config,
            job_dir_key="hydra.sweep.dir",
            job_subdir_key="hydra.sweep.subdir",
        )
        hydra_utils.configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        return ret
