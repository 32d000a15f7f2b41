"""The config nodes of ``hydra/sweeper=benchreg`` and ``hydra/launcher=benchreg`` (benchreg's config
selects both). No ``from __future__ import annotations`` here: Hydra imports this module while it
scans for plugins, before it is in ``sys.modules``, where dataclasses would look up such
annotations."""

from dataclasses import dataclass

from hydra.core.config_store import ConfigStore


@dataclass
class BenchregSweeperConf:
    _target_: str = "hydra_plugins.benchreg_sweeper.BenchregSweeper"
    # jobs handed to the launcher at a time (null: all of them), as Hydra's basic sweeper
    max_batch_size: int | None = None
    # sweep overrides added in front of the command line's (`key: a,b`), as the basic sweeper
    params: dict[str, str] | None = None


ConfigStore.instance().store(
    group="hydra/sweeper", name="benchreg", node=BenchregSweeperConf, provider="benchreg"
)


@dataclass
class BenchregLauncherConf:
    _target_: str = "hydra_plugins.benchreg_sweeper.launcher.BenchregLauncher"


ConfigStore.instance().store(
    group="hydra/launcher", name="benchreg", node=BenchregLauncherConf, provider="benchreg"
)
