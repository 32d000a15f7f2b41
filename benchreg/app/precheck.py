"""The overrides of a run, judged before Hydra composes anything, by the app's own rules.

A bad override is found here in a fraction of the time a composition takes, and reported with
the line the app gives after one: the same checks (:func:`benchreg.app.errors.
reject_secret_overrides`, the option files of a config group, the app config's keys,
:func:`benchreg.app.config.app_settings`, the entry look-up of :mod:`benchreg.core.entries`) in
the same order, over the config as it would be composed (conf/config.yaml and the chosen model's
file, read by :mod:`benchreg.app.help`). What this cannot judge exactly (a flag such as `-m`, a
value in Hydra's grammar beyond plain words, numbers and quoted text, `+`/`~` overrides,
`hydra.*` keys other than the output folders, a family's own config group, a model file with a
defaults list) ends the check: Hydra and the app then see the command line unchanged, as always.
"""

from __future__ import annotations

import re
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from benchreg.app.errors import no_such_option, unknown_option

# keys of Hydra's own config that only name the output folders (the app checks them later)
OUTPUT_KEYS = ("hydra.run.dir", "hydra.sweep.dir")
LOADER_PARAMS = ("loader_params.", "task.loader.params.")
_KEY = re.compile(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*", re.ASCII)
_UNQUOTED = re.compile(r"[\w/+.%*@?|:-]*", re.ASCII)
_QUOTED = re.compile(r"'([^'\"\\$]*)'|\"([^'\"\\$]*)\"")
_UINT = r"(?:0|[1-9][0-9]*)"
_POINT_FLOAT = rf"(?:{_UINT}\.|{_UINT}?\.[0-9]+)"
_INT = re.compile(rf"[+-]?{_UINT}")
_FLOAT = re.compile(
    rf"[+-]?(?:{_POINT_FLOAT}|(?:{_UINT}|{_POINT_FLOAT})e[+-]?[0-9]+|inf|nan)", re.IGNORECASE
)


class Unjudged(Exception):
    """Something this check cannot judge exactly: Hydra and the app take over."""


@dataclass(frozen=True)
class Override:
    key: str
    value: Any  # as Hydra's override grammar reads it


def check(argv: list[str]) -> None:
    """Raise the app's error for the first bad override, in the app's order; return when every
    override passed or one is beyond this check."""
    try:
        overrides = [read_override(arg) for arg in argv]
    except Unjudged:
        return
    if not overrides or any(
        o.key.startswith("hydra.") and o.key not in OUTPUT_KEYS for o in overrides
    ):
        return
    from benchreg.app.errors import reject_secret_overrides

    reject_secret_overrides(argv)
    try:
        config = _composed(overrides)
    except Unjudged:
        return
    from benchreg.app.config import app_settings, task_name

    app_settings(config)
    _check_task(task_name(config))


def read_override(arg: str) -> Override:
    """``key=value`` as Hydra reads it, for a plain dotted key and a value that is a word, a
    number, true/false/null or quoted text without escapes or interpolations."""
    key, sep, text = arg.partition("=")
    if not sep or not _KEY.fullmatch(key):
        raise Unjudged(arg)
    quoted = _QUOTED.fullmatch(text)
    if quoted:
        return Override(key, quoted.group(1) if quoted.group(1) is not None else quoted.group(2))
    digits = text.replace("_", "")
    if not _UNQUOTED.fullmatch(text) or (digits != text and _number(digits)):
        raise Unjudged(arg)  # Hydra reads `1_000` as a number: not worth the rule here
    return Override(key, _primitive(text))


def _number(text: str) -> bool:
    return bool(_INT.fullmatch(text) or _FLOAT.fullmatch(text))


def _primitive(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "null":
        return None
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def _composed(overrides: list[Override]) -> dict[str, Any]:
    """The app config (what the app validates: no `hydra` node) these overrides compose, or the
    app's error for an unknown option of a config group or an unknown key."""
    from benchreg.app import help as files

    chosen = _chosen_options(overrides)
    own = {k: deepcopy(v) for k, v in files.app_config().items() if k not in ("defaults", "hydra")}
    groups = {group: deepcopy(_group_node(group, option)) for group, option in chosen.items()}
    config = groups | own  # (copies: the files' nodes are read once per process)
    config["loader_params"] = dict(config.get("loader_params") or {})
    for override in overrides:
        if override.key not in chosen:
            _set(config, override)
    return config


def _chosen_options(overrides: list[Override]) -> dict[str, str]:
    """Each group's option, checked in Hydra's order (the groups the defaults list does not
    name, as given, then the defaults list's) before any key is set."""
    from benchreg.app import help as files

    groups = files.group_options()
    chosen = files.default_options()
    given = {o.key: o for o in overrides if o.key in groups}
    keys = [o.key for o in overrides]
    for key in [*(g for g in given if g not in chosen), *(g for g in chosen if g in given)]:
        option = given[key].value
        if keys.count(key) > 1 or key in files.STORED_GROUPS or not isinstance(option, str):
            raise Unjudged(key)
        if option not in groups[key]:
            raise no_such_option(key, option, groups[key])
    if any(key not in chosen for key in given):
        raise Unjudged("a family's group")  # it puts its options where its files say
    return chosen | {key: override.value for key, override in given.items()}


def _group_node(group: str, option: str) -> dict[str, Any]:
    from benchreg.app import help as files

    if group in files.STORED_GROUPS:
        return {}  # `roots`: its keys are judged by name below, its values by the app
    path = files.option_file(group, option)
    text = path.read_text("utf-8") if path is not None else ""
    node = files.load_yaml(text) if text else None
    if not isinstance(node, dict) or "defaults" in node or "@package" in text or "${" in text:
        raise Unjudged(group)
    return node


def _set(config: dict[str, Any], override: Override) -> None:
    """Set ``override`` as Hydra does in the composed config: only an existing key (a loader
    param is added, as the app makes Hydra do)."""
    from benchreg.app import help as files

    key = override.key
    prefix = next((p for p in LOADER_PARAMS if key.startswith(p)), None)
    if prefix is not None:
        name = key.removeprefix(prefix)
        if "." in name or name in config["loader_params"]:
            raise Unjudged(key)
        config["loader_params"][name] = override.value
        return
    if key in OUTPUT_KEYS:
        return
    *parents, last = key.split(".")
    node: Any = config
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if parents == ["roots"] and isinstance(node, dict):
        if last not in files.family_folders():
            raise unknown_option(key)
    elif not isinstance(node, dict):
        raise Unjudged(key)
    elif last not in node:
        raise unknown_option(key)
    node[last] = override.value


def _check_task(name: str) -> None:
    """The entry look-up of :func:`benchreg.core.task.load_task` (an entry or an alias), which
    the app does once the config passed."""
    from benchreg.core.entries import find_task_file, task_folders, unknown_task

    folders = task_folders()
    if find_task_file(name, folders) is None:
        raise unknown_task(name, folders)
