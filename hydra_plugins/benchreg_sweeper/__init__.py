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
        # Hydra lists group options without the user's hydra.searchpath; pass it on.
        assert self.config is not None
        extra = list(self.config.hydra.searchpath or [])
        searchpath = [f"hydra.searchpath=[{','.join(extra)}]"] if extra else []
        config_name = self.config.hydra.job.config_name
        expanded: list[str] = []
        for text, override in zip(arguments, parser.parse_overrides(arguments), strict=True):
            glob = override.value() if override.is_sweep_override() else None
            if not isinstance(glob, Glob):
                expanded.append(text)
                continue
            group = override.get_key_element()
            options = glob.filter(_nested_options(loader, group, config_name, searchpath))
            if not options:
                raise ValueError(f"{text!r} matches no option of config group {group!r}")
            expanded.append(f"{group}={','.join(options)}")
        # The basic sweeper saves its config as multirun.yaml: save a redacted one instead.
        config = self.config
        self.config = _redacted(config)
        try:
            return super().sweep(expanded)
        finally:
            self.config = config


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


def _nested_options(
    loader: Any, group: str, config_name: str | None, overrides: list[str], prefix: str = ""
) -> list[str]:
    here = f"{group}/{prefix}".rstrip("/")

    def options_of(kind: ObjectType) -> list[str]:
        names = loader.get_group_options(here, kind, config_name=config_name, overrides=overrides)
        return [name for name in names if not name.startswith("_")]

    options = [f"{prefix}{name}" for name in options_of(ObjectType.CONFIG)]
    for sub in options_of(ObjectType.GROUP):
        options.extend(_nested_options(loader, group, config_name, overrides, f"{prefix}{sub}/"))
    return sorted(options)
