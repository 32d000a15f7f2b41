"""Finding task entries and turning them into validated :class:`TaskSpec` objects.

A task entry is `<folder>/<group>/<name>.yaml`; it may start with a Hydra defaults list naming a
shared base (`/task/_base/<family>@_here_`) and `_self_`. The Hydra app composes entries itself;
:func:`load_task` does the same composition without Hydra (library use, tests, tools).
Errors name the file and line of the offending key.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from benchreg.core.errors import BenchregError, at
from benchreg.core.io import read_yaml
from benchreg.core.spec import TaskSpec, check_components
from benchreg.resources import tasks_dir

ENV_VAR = "BENCHREG_TASKS_PATH"


def task_folders(extra: Iterable[Path] = ()) -> list[Path]:
    """Folders laid out as `<group>/<name>.yaml`: built-in, $BENCHREG_TASKS_PATH, then ``extra``."""
    folders = [tasks_dir()]
    folders += [Path(p) for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p.strip()]
    folders += list(extra)
    return folders


def find_task_file(name: str, folders: Iterable[Path]) -> Path | None:
    """The entry file of ``name`` (or of the entry that lists ``name`` among its aliases)."""
    folders = list(folders)
    for folder in folders:
        for candidate in (folder / f"{name}.yaml", folder / "task" / f"{name}.yaml"):
            if candidate.is_file():
                return candidate
    for folder in folders:
        target = alias_index(folder).get(name)
        if target is not None:
            return target
    return None


def alias_index(folder: Path) -> dict[str, Path]:
    """``alias -> entry file`` for the entries of one folder that declare `aliases`."""
    return dict(_alias_index(folder.resolve(), _tree_stamp(folder)))


def _tree_stamp(folder: Path) -> float:
    return max((p.stat().st_mtime for p in folder.rglob("*.yaml")), default=0.0)


@cache
def _alias_index(folder: Path, stamp: float) -> tuple[tuple[str, Path], ...]:
    found = []
    for path in sorted(folder.rglob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue  # a broken file is reported when it is itself selected
        aliases = data.get("aliases") if isinstance(data, dict) else None
        for alias in aliases if isinstance(aliases, list) else []:
            found.append((str(alias), path))
    return tuple(found)


def list_tasks(folders: Iterable[Path] | None = None) -> list[str]:
    names: set[str] = set()
    for folder in folders if folders is not None else task_folders():
        for path in folder.rglob("*.yaml"):
            rel = path.relative_to(folder).with_suffix("").as_posix()
            rel = rel.removeprefix("task/")
            if not any(part.startswith("_") for part in rel.split("/")):
                names.add(rel)
    return sorted(names)


def load_task(name: str, extra_folders: Iterable[Path] = ()) -> TaskSpec:
    """Compose and validate the task entry ``name`` (e.g. ``"molp2s/gap"``) without Hydra."""
    folders = task_folders(extra_folders)
    path = find_task_file(name, folders)
    if path is None:
        raise BenchregError(
            f"unknown task {name!r}", fix=f"known tasks: {', '.join(list_tasks(folders))}"
        )
    data, sources = compose_entry(path, folders)
    return spec_from_mapping(data, sources)


def compose_entry(path: Path, folders: list[Path]) -> tuple[dict[str, Any], list[Path]]:
    """Merge a task file with the bases its defaults list names; returns data and source files."""
    raw = _read_yaml(path)
    defaults = raw.pop("defaults", ["_self_"])
    merged: dict[str, Any] = {}
    sources: list[Path] = []
    if "_self_" not in defaults:
        defaults = [*defaults, "_self_"]
    for entry in defaults:
        if entry == "_self_":
            merged = _deep_merge(merged, raw)
            sources.append(path)
            continue
        ref = str(entry).split("@", 1)[0].lstrip("/").removeprefix("task/")
        base = find_task_file(ref, folders)
        if base is None:
            raise BenchregError(f"defaults entry {entry!r} names no file", where=path)
        base_data, base_sources = compose_entry(base, folders)
        merged = _deep_merge(merged, base_data)
        sources = [*base_sources, *sources]
    return merged, sources


def spec_from_mapping(data: Mapping[str, Any], sources: list[Path]) -> TaskSpec:
    """Validate a composed entry; errors name the file:line of the key (sources: base first)."""
    try:
        spec = TaskSpec.model_validate(dict(data))
    except ValidationError as exc:
        error = exc.errors()[0]
        keys = [str(k) for k in error["loc"] if not isinstance(k, int)]
        where = locate_key(sources, keys) or (str(sources[-1]) if sources else None)
        if error["type"] == "extra_forbidden":
            what = f"unknown key {'.'.join(keys)!r} in task entry"
            fix = f"allowed keys: {', '.join(_allowed_keys(keys))}"
        elif error["type"] == "missing":
            what = f"task entry lacks required key {'.'.join(keys)!r}"
            fix = "add it (see tasks/_base/ for examples)"
        else:
            what = f"bad value for {'.'.join(keys) or 'entry'!r}: {error['msg']}"
            fix = "see the task spec in benchreg/core/spec.py"
        raise BenchregError(what, where=where, fix=fix) from None
    problems = check_components(spec)
    if problems:
        field, message = problems[0]
        unknown = message.split("'")[1] if "'" in message else ""
        where = locate_value(sources, unknown) or locate_key(sources, [field])
        raise BenchregError(f"{field}: {message}", where=where)
    return spec


def _allowed_keys(keys: list[str]) -> list[str]:
    from benchreg.core.spec import ComponentRef, MetricRef, PromptSpec

    model: Any = TaskSpec
    if len(keys) > 1:
        model = {"metrics": MetricRef, "prompt": PromptSpec}.get(keys[0], ComponentRef)
    return sorted(model.model_fields)


def locate_key(sources: list[Path], keys: list[str]) -> str | None:
    """file:line of the (last) source that sets the nested key ``keys``."""
    for path in reversed(sources):
        line = _key_line(path, keys)
        if line is not None:
            return at(path, line)
    return None


def locate_value(sources: list[Path], value: str) -> str | None:
    if not value:
        return None
    for path in reversed(sources):
        for node in _walk(_compose(path)):
            if isinstance(node, yaml.ScalarNode) and node.value == value:
                return at(path, node.start_mark.line + 1)
    return None


def _key_line(path: Path, keys: list[str]) -> int | None:
    node = _compose(path)
    line = None
    for key in keys:
        if isinstance(node, yaml.SequenceNode):
            found = [
                _find_key(item, key) for item in node.value if isinstance(item, yaml.MappingNode)
            ]
            found = [f for f in found if f is not None]
            if not found:
                return line
            key_node, node = found[0]
        elif isinstance(node, yaml.MappingNode):
            hit = _find_key(node, key)
            if hit is None:
                return line
            key_node, node = hit
        else:
            return line
        line = key_node.start_mark.line + 1
    return line


def _find_key(node: yaml.MappingNode, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    for key_node, value_node in node.value:
        if key_node.value == key:
            return key_node, value_node
    return None


def _walk(node: yaml.Node | None) -> Iterable[yaml.Node]:
    if node is None:
        return
    yield node
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            yield from _walk(key_node)
            yield from _walk(value_node)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _walk(item)


def _compose(path: Path) -> yaml.Node | None:
    with path.open(encoding="utf-8") as handle:
        return yaml.compose(handle, Loader=yaml.SafeLoader)


def _read_yaml(path: Path) -> dict[str, Any]:
    data = read_yaml(path) or {}
    if not isinstance(data, dict):
        raise BenchregError("a task entry must be a YAML mapping", where=path)
    return data


def _deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out
