"""Compose a sweep's job configs without a full Hydra composition per job.

The jobs of a sweep usually differ only in plain values (`task=molp2s/gap`, `view=shuffled`):
keys that are no config group, set after composition exactly as Hydra's
``ConfigLoaderImpl._apply_overrides_to_config`` sets them. :class:`ComposeCache` composes the
first job of each *shape* (the same override keys in the same order, the same group and Hydra
overrides) with Hydra, keeps a pristine copy, and gives every later job of that shape a copy of it
with its own plain values applied, `hydra.overrides.task` and `hydra.job.override_dirname`
rewritten as Hydra writes them. Anything else (a config group, a Hydra key, `+`/`~`/`++`, a
dict or list value, a value the copy cannot take) is composed by Hydra as before. The result is
the same config a full composition gives (tests/app/test_sweeper.py compares them).

``in_place=True`` (what the in-process launchers ask for) hands out the template itself, every
value a job may change set again for this job: a config that the launcher's ``run_job`` only
reads and copies (the ``hydra`` node for :class:`HydraConfig`, the rest for the task function)
before the next job is derived, so that each job costs one copy of its config instead of two.
Such a config must not be kept: :attr:`ComposeCache.shared` says when the last one was.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from hydra._internal.config_loader_impl import ConfigLoaderImpl, get_overrides_dirname
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, OverrideType
from omegaconf import DictConfig, OmegaConf, open_dict

Compose = Callable[[DictConfig, list[str]], DictConfig]
_SCALARS = (str, int, float, bool, type(None))


class ComposeCache:
    """``load_sweep_config(master, overrides)`` with one Hydra composition per job shape."""

    def __init__(self, loader: Any, compose: Compose) -> None:
        self.loader = loader
        self.compose = compose  # Hydra's own load_sweep_config
        self.parser = OverridesParser.create()
        self._templates: dict[Any, _Template] = {}
        self.composed = 0  # full Hydra compositions (for tests)
        self.copied = 0  # configs built from a template
        self.shared = False  # whether the last config handed out was a template (in place)

    def __call__(
        self, master: DictConfig, overrides: list[str], *, in_place: bool = False
    ) -> DictConfig:
        self.shared = False
        try:
            parsed = self.parser.parse_overrides(overrides)
        except Exception:
            return self._full(master, overrides)  # Hydra words the error
        key = (id(master), _shape(parsed))
        template = self._templates.get(key)
        if template is not None and template.master is master:
            try:
                cfg = template.derive(parsed, in_place=in_place)
            except _Spoiled:
                del self._templates[key]  # half-set in place: composed again below
                template, cfg = None, None
            if cfg is not None:
                OmegaConf.copy_cache(from_config=master, to_config=cfg)
                self.copied += 1
                self.shared = cfg is template.cfg
                return cfg
        cfg = self._full(master, overrides)
        if template is None or template.master is not master:
            self._templates[key] = _Template(
                master, parsed, copy.deepcopy(cfg), self._groups(master, overrides, parsed)
            )
        return cfg

    def _full(self, master: DictConfig, overrides: list[str]) -> DictConfig:
        self.composed += 1
        return self.compose(master, overrides)

    def _groups(self, master: DictConfig, overrides: list[str], parsed: list[Override]) -> set[str]:
        """The override keys that are config groups for this job's search path."""
        all_overrides = [*OmegaConf.to_container(master.hydra.overrides.hydra), *overrides]
        _, repo = self.loader._parse_overrides_and_create_caching_repo(
            master.hydra.job.config_name, all_overrides
        )
        return {o.key_or_group for o in parsed if repo.group_exists(o.key_or_group)}


def _shape(parsed: Sequence[Override]) -> tuple[Any, ...]:
    """What two jobs must share for one to be derived from the other: every key and override
    type in order; the whole text of Hydra, group-like, sweep and non-scalar overrides."""
    out = []
    for o in parsed:
        if _maybe_plain(o):
            out.append((o.key_or_group, "plain"))
        else:
            out.append((o.key_or_group, o.input_line))
    return tuple(out)


def _maybe_plain(o: Override) -> bool:
    return (
        o.type == OverrideType.CHANGE
        and o.package is None
        and not o.is_hydra_override()
        and not o.is_sweep_override()
        and "/" not in o.key_or_group
        and isinstance(o.value(), _SCALARS)
    )


RUN_KEYS = ("hydra.job.id", "hydra.job.num", "hydra.runtime.output_dir")


def _node_copy(cfg: DictConfig, key: str) -> Any:
    parent, _, leaf = key.rpartition(".")
    return copy.deepcopy(OmegaConf.select(cfg, parent)._get_node(leaf))


class _Spoiled(Exception):
    """Setting a job's values on the template itself failed part-way: the template is lost."""


class _Template:
    def __init__(
        self, master: DictConfig, parsed: list[Override], cfg: DictConfig, groups: set[str]
    ) -> None:
        self.master = master
        self.lines = [o.input_line for o in parsed]
        self.cfg = cfg  # composed for the first job of this shape; in place, the last job's
        self.keys = [o.key_or_group for o in parsed]
        self.groups = groups
        # HydraConfig.set_config marks the job's `hydra` node read-only, and the launcher and
        # run_job set these keys on the job they run: undone in place
        self.hydra_readonly = cfg.hydra._get_node_flag("readonly")
        self.run_keys = {key: _node_copy(cfg, key) for key in RUN_KEYS}

    def _independent(self, key: str) -> bool:
        """Whether ``key`` is set once and by no override inside or around it (`run=...` and
        `run.limit=3`): then setting it last, on the template, is setting it in its place."""
        return self.keys.count(key) == 1 and not any(
            other.startswith(key + ".") or key.startswith(other + ".") for other in self.keys
        )

    def derive(self, parsed: list[Override], *, in_place: bool = False) -> DictConfig | None:
        """The template with the job's plain values, or None when Hydra must compose it.
        ``in_place``: the template itself, with every value a job may change set again (an
        earlier job may have set its own); else a copy. Raises :class:`_Spoiled` when setting
        them in place failed part-way."""
        changed = [o for o, line in zip(parsed, self.lines, strict=True) if o.input_line != line]
        if any(
            o.key_or_group in self.groups or not self._independent(o.key_or_group) for o in changed
        ):
            return None
        for o in changed:
            node = OmegaConf.select(self.cfg, o.key_or_group, throw_on_missing=False)
            if OmegaConf.is_config(node):  # a container replaced by a value: Hydra's business
                return None
        # every value a job may change is set again (in place, an earlier job may have changed
        # it); the others (a group, a key inside or around another) are as composed
        settable = [
            o
            for o in parsed
            if _maybe_plain(o)
            and o.key_or_group not in self.groups
            and self._independent(o.key_or_group)
        ]
        cfg = self.cfg if in_place else copy.deepcopy(self.cfg)
        OmegaConf.set_readonly(cfg.hydra, self.hydra_readonly)
        with open_dict(cfg):
            for key, node in self.run_keys.items():
                OmegaConf.update(cfg, key, copy.deepcopy(node), merge=False)
        try:
            ConfigLoaderImpl._apply_overrides_to_config(settable, cfg)
        except Exception as exc:
            if in_place:
                raise _Spoiled from exc
            return None  # Hydra composes it and reports the error its own way
        app = [o for o in parsed if not o.is_hydra_override()]
        dirname = cfg.hydra.job.config.override_dirname
        with open_dict(cfg.hydra):
            cfg.hydra.overrides.task = [o.input_line for o in app]
            cfg.hydra.job.override_dirname = get_overrides_dirname(
                overrides=app,
                kv_sep=dirname.kv_sep,
                item_sep=dirname.item_sep,
                exclude_keys=dirname.exclude_keys,
            )
        return cfg
