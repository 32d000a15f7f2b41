"""The sweeper's config node, ``hydra/sweeper=benchreg`` (benchreg's config selects it)."""

from dataclasses import dataclass
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeperConf
from hydra.core.config_store import ConfigStore


@dataclass
class BenchregSweeperConf(BasicSweeperConf):
    _target_: str = "hydra_plugins.benchreg_sweeper.BenchregSweeper"
    workers: Any = "auto"  # processes of the in-process launcher: auto | a positive integer


ConfigStore.instance().store(
    group="hydra/sweeper", name="benchreg", node=BenchregSweeperConf, provider="benchreg"
)
