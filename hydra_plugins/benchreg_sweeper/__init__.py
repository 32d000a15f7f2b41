"""Hydra's basic sweeper, with `glob()` that also matches nested config-group options.

Hydra lists only the options directly inside a group, so `task='glob(molp2s/*)'` would match
nothing: task entries live one level down (`task/molp2s/gap.yaml`). This sweeper expands a glob
over the whole subtree of the group (every search-path source) before the basic sweep runs.
Options whose path has a part starting with `_` (shared bases such as `_base/molp2s`) are never
matched: they are building blocks, not runnable entries.
"""

from __future__ import annotations

from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.object_type import ObjectType
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Glob


class RecursiveGlobSweeper(BasicSweeper):
    def sweep(self, arguments: list[str]) -> Any:
        assert self.hydra_context is not None
        loader = self.hydra_context.config_loader
        parser = OverridesParser.create(config_loader=loader)
        expanded: list[str] = []
        for text, override in zip(arguments, parser.parse_overrides(arguments), strict=True):
            glob = override.value() if override.is_sweep_override() else None
            if not isinstance(glob, Glob):
                expanded.append(text)
                continue
            group = override.get_key_element()
            options = glob.filter(_nested_options(loader, group))
            if not options:
                raise ValueError(f"{text!r} matches no option of config group {group!r}")
            expanded.append(f"{group}={','.join(options)}")
        return super().sweep(expanded)


def _nested_options(loader: Any, group: str, prefix: str = "") -> list[str]:
    here = f"{group}/{prefix}".rstrip("/")
    options = [
        f"{prefix}{name}"
        for name in loader.get_group_options(here, results_filter=ObjectType.CONFIG)
        if not name.startswith("_")
    ]
    for sub in loader.get_group_options(here, results_filter=ObjectType.GROUP):
        if not sub.startswith("_"):
            options.extend(_nested_options(loader, group, f"{prefix}{sub}/"))
    return sorted(options)
