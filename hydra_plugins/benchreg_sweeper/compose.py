"""A sweep's job configs with one Hydra composition per job *shape*, through public APIs only.

The jobs of a sweep usually differ only in plain values (`task=molp2s/gap`, `view=shuffled`),
and a Hydra composition re-reads and merges every config file for each (about 50 ms). A job is
composed by Hydra (``ConfigLoader.load_sweep_config``) when it is the first of its shape: the
same override keys in the same order, each group choice, Hydra override, `+`/`~`/`++` override
and non-scalar value the same. Every later job of that shape is a copy of that composition with
its own plain values set as Hydra sets a `key=value` override (``OmegaConf.update`` with
merge), and ``hydra.overrides.task`` and ``hydra.job.override_dirname`` written as Hydra writes
them. tests/app/test_sweeper.py compares such copies with Hydra's own compositions.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

from hydra.core.config_loader import ConfigLoader
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, OverrideType
from omegaconf import DictConfig, OmegaConf, open_dict

_SCALARS = (str, int, float, bool, type(None))


class JobConfigs:
    """``configs(overrides)``: the config of the job with these overrides, as
    ``loader.load_sweep_config(master, overrides)`` composes it."""

    def __init__(self, loader: ConfigLoader, master: DictConfig) -> None:
        self.loader = loader
        self.master = master
        self.parser = OverridesParser.create()
        self.templates: dict[tuple[Any, ...], tuple[list[Override], DictConfig]] = {}
        self.composed = 0  # Hydra compositions made (the rest were copies)
        self._groups: set[str] | None = None

    def __call__(self, overrides: Sequence[str]) -> DictConfig:
        parsed = self.parser.parse_overrides(list(overrides))
        shape = tuple(
            (o.key_or_group, "value" if self._plain(o) else o.input_line) for o in parsed
        )
        template = self.templates.get(shape)
        values = [o.key_or_group for o in parsed if o.key_or_group not in self.groups()]
        if template is not None and _independent(values):
            try:
                return self._derived(*template, parsed)
            except Exception:  # Hydra composes it and words the problem its own way
                pass
        self.composed += 1
        cfg = self.loader.load_sweep_config(self.master, list(overrides))
        self.templates[shape] = (parsed, copy.deepcopy(cfg))
        return cfg

    def _plain(self, o: Override) -> bool:
        """A `key=value` override of a scalar on a key that is no config group."""
        return (
            o.type == OverrideType.CHANGE
            and o.package is None
            and not o.is_hydra_override()
            and not o.is_sweep_override()
            and o.key_or_group not in self.groups()
            and isinstance(o.value(), _SCALARS)
        )

    def groups(self) -> set[str]:
        """Every config group on the search path (``model``, ``hydra/launcher``, ...)."""
        if self._groups is None:
            found: set[str] = set()
            pending = [""]
            while pending:
                parent = pending.pop()
                for name in self.loader.list_groups(parent):
                    full = f"{parent}/{name}" if parent else name
                    found.add(full)
                    pending.append(full)
            self._groups = found
        return self._groups

    def _derived(
        self, template_overrides: list[Override], template: DictConfig, parsed: list[Override]
    ) -> DictConfig:
        cfg = copy.deepcopy(template)
        pairs = zip(parsed, template_overrides, strict=True)
        changed = [o for o, t in pairs if o.input_line != t.input_line]
        with open_dict(cfg):
            for override in changed:
                OmegaConf.update(cfg, override.key_or_group, override.value(), merge=True)
            app = [o for o in parsed if not o.is_hydra_override()]
            cfg.hydra.overrides.task = [o.input_line for o in app]
            cfg.hydra.job.override_dirname = overrides_dirname(app, cfg.hydra.job.config)
        OmegaConf.copy_cache(from_config=self.master, to_config=cfg)
        return cfg


def _independent(keys: list[str]) -> bool:
    """Whether each key is set once and by no value override inside or around it (`run=...`
    and `run.limit=3`): then setting one key last sets it in its place. (A config group choice
    is made before any value is set, as in Hydra's composition.)"""
    return len(set(keys)) == len(keys) and not any(
        a != b and b.startswith(a + ".") for a in keys for b in keys
    )


def overrides_dirname(overrides: list[Override], job_config: Any) -> str:
    """``hydra.job.override_dirname`` as Hydra writes it: the override texts but those of
    ``exclude_keys``, sorted, joined by ``item_sep``, each `=` written as ``kv_sep``."""
    settings = job_config.override_dirname
    lines = sorted(
        str(o.input_line) for o in overrides if o.key_or_group not in settings.exclude_keys
    )
    return re.sub("=", settings.kv_sep, settings.item_sep.join(lines))
