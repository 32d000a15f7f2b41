"""Finding task entries and composing them into validated :class:`TaskSpec` objects.

A task entry is `<folder>/<group>/<name>.yaml` (or `<folder>/tasks/<group>/<name>.yaml` for a
folder on Hydra's search path, which may also hold other config groups such as `model/`); it may
start with a defaults list naming a shared base (`/task/_base/<family>@_here_`) and `_self_`.
:func:`benchreg.core.task.load_task` composes with these functions and binds the result; the Hydra
app resolves its `task=<name>` string with it.
Task files only name registered components, so `${...}` interpolations are rejected. Errors
name the file and line of the offending key.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from benchreg.core.errors import BenchregError, at
from benchreg.core.io import check_yaml_node, read_yaml
from benchreg.core.resources import tasks_dir
from benchreg.core.spec import TaskSpec

ENV_VAR = "BENCHREG_TASKS_PATH"


def task_folders(extra: Iterable[Path] = ()) -> list[Path]:
    """Folders of entries, searched in order: built-in, $BENCHREG_TASKS_PATH, then ``extra``."""
    folders = [tasks_dir()]
    folders += [Path(p) for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p.strip()]
    folders += list(extra)
    return folders


def entries_root(folder: Path) -> Path:
    """Where a folder's entries live: `<folder>/tasks/` when it has one, else the folder."""
    nested = folder / "tasks"
    return nested if nested.is_dir() else folder


def find_task_file(name: str, folders: Iterable[Path]) -> Path | None:
    """The entry file of ``name`` (or of the entry that lists ``name`` among its aliases)."""
    folders = list(folders)
    parts = name.replace("\\", "/").split("/")
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in name:
        return None  # an entry name, never a path out of the task folders
    for folder in folders:
        candidate = entries_root(folder) / f"{name}.yaml"
        if candidate.is_file():
            return candidate
    for folder in folders:
        target = alias_index(folder).get(name)
        if target is not None:
            return target
    return None


def alias_index(folder: Path) -> dict[str, Path]:
    """``alias -> entry file`` for the entries of one folder that declare `aliases`."""
    root = entries_root(folder)
    if not root.is_dir():
        return {}
    return dict(_alias_index(root.resolve(), _tree_stamp(root)))


def _tree_stamp(folder: Path) -> float:
    return max((p.stat().st_mtime for p in folder.rglob("*.yaml")), default=0.0)


@cache
def _alias_index(folder: Path, stamp: float) -> tuple[tuple[str, Path], ...]:
    found = []
    for path in sorted(folder.rglob("*.yaml")):
        try:
            data = read_yaml(path)  # bounded: an alias bomb in a user folder cannot hang this
        except BenchregError:
            continue  # a broken file is reported when it is itself selected
        aliases = data.get("aliases") if isinstance(data, dict) else None
        for alias in aliases if isinstance(aliases, list) else []:
            found.append((str(alias), path))
    return tuple(found)


def list_tasks(folders: Iterable[Path] | None = None) -> list[str]:
    """Runnable entry names; entries or folders starting with `_` (shared bases) are left out."""
    names: set[str] = set()
    for folder in folders if folders is not None else task_folders():
        root = entries_root(folder)
        for path in root.rglob("*.yaml"):
            rel = path.relative_to(root).with_suffix("").as_posix()
            if not any(part.startswith("_") for part in rel.split("/")):
                names.add(rel)
    return sorted(names)


def unknown_task(name: str, folders: list[Path]) -> BenchregError:
    """One line naming the nearest known entries (case-insensitive; aliases count)."""
    known = list_tasks(folders)
    aliases = [alias for folder in folders for alias in alias_index(folder)]
    near = nearest(name, [*known, *aliases])
    listing = f"`python -m benchreg tasks` lists all {len(known)}"
    fix = f"did you mean {', '.join(map(repr, near))}? {listing}" if near else listing
    return BenchregError(f"unknown task {name!r}", fix=fix)


def nearest(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates closest to ``word``, ignoring case."""
    by_lower: dict[str, str] = {}
    for candidate in candidates:
        by_lower.setdefault(candidate.lower(), candidate)
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=n, cutoff=0.7)
    return [by_lower[c] for c in close]


def compose_entry(
    path: Path, folders: list[Path], chain: tuple[Path, ...] = ()
) -> tuple[dict[str, Any], list[Path]]:
    """Merge a task file with the bases its defaults list names.

    Returns the data and the source files in merge order (a later file overrides an earlier one),
    so that an error is located in the last file that set the key. A defaults list that leads
    back to a file already being composed is an error naming the cycle.
    """
    resolved = path.resolve()
    if resolved in chain:
        cycle = " -> ".join(p.name for p in (*chain, resolved))
        where = locate_key([chain[-1]], ["defaults"]) or chain[-1]
        raise BenchregError(
            f"the defaults list includes {path.name} again (a cycle: {cycle})",
            where=where,
            fix="a base must not name the entry (or itself) in its defaults",
        )
    chain = (*chain, resolved)
    raw = _read_yaml(path)
    defaults = raw.pop("defaults", ["_self_"])
    if not isinstance(defaults, list):
        raise BenchregError(
            "`defaults` must be a list", where=locate_key([path], ["defaults"]) or path
        )
    merged: dict[str, Any] = {}
    sources: list[Path] = []
    if "_self_" not in defaults:
        defaults = [*defaults, "_self_"]
    for entry in defaults:
        if entry == "_self_":
            merged = _deep_merge(merged, raw)
            sources.append(path)
            continue
        base = _defaults_target(entry, path, folders)
        base_data, base_sources = compose_entry(base, folders, chain)
        merged = _deep_merge(merged, base_data)
        sources = [*sources, *base_sources]
    return merged, sources


def _defaults_target(entry: Any, path: Path, folders: list[Path]) -> Path:
    where = locate_value([path], str(entry)) or locate_key([path], ["defaults"]) or str(path)
    ref, _, package = str(entry).partition("@")
    if not isinstance(entry, str) or not ref or package not in ("", "_here_"):
        raise BenchregError(
            f"unsupported defaults entry {entry!r}",
            where=where,
            fix="name a base as `/task/<path>@_here_`, or `_self_`",
        )
    base = find_task_file(ref.lstrip("/").removeprefix("task/"), folders)
    if base is None:
        raise BenchregError(f"defaults entry {entry!r} names no file", where=where)
    return base


def spec_from_mapping(
    data: Mapping[str, Any], sources: list[Path], entry: Path | None = None
) -> TaskSpec:
    """Validate a composed entry; errors name the file:line of the key (sources in merge order)."""
    fallback = entry or (sources[-1] if sources else None)
    try:
        spec = TaskSpec.model_validate(dict(data))
    except ValidationError as exc:
        error = exc.errors()[0]
        keys = [str(k) for k in error["loc"] if not isinstance(k, int)]
        where = locate_key(sources, keys) or fallback
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
    return spec


def _allowed_keys(keys: list[str]) -> list[str]:
    from benchreg.core.spec import ComponentRef, MetricRef, PromptSpec

    model: Any = TaskSpec
    if len(keys) > 1:
        model = {"metrics": MetricRef, "prompt": PromptSpec}.get(keys[0], ComponentRef)
    return sorted(model.model_fields)


def locate_key(sources: list[Path], keys: list[str | int]) -> str | None:
    """file:line of the (last) source that sets the nested key ``keys`` (an int picks an item
    of a list)."""
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


def _key_line(path: Path, keys: list[str | int]) -> int | None:
    node = _compose(path)
    line = None
    for key in keys:
        if isinstance(key, int):
            if not isinstance(node, yaml.SequenceNode) or not 0 <= key < len(node.value):
                return None  # this file does not hold that list
            node = node.value[key]
            line = node.start_mark.line + 1
            continue
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
    stat = path.stat()
    return _compose_cached(path, stat.st_mtime_ns, stat.st_size)


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: same nodes, faster


@lru_cache(maxsize=256)
def _compose_cached(path: Path, mtime_ns: int, size: int) -> yaml.Node | None:
    try:
        with path.open(encoding="utf-8") as handle:
            node = yaml.compose(handle, Loader=_LOADER)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None  # read_yaml reports it, located
    check_yaml_node(node, path)
    return node


def _read_yaml(path: Path) -> dict[str, Any]:
    data = read_yaml(path) or {}
    if not isinstance(data, dict):
        raise BenchregError("a task entry must be a YAML mapping", where=path)
    _reject_interpolations(path)
    return data


def _reject_interpolations(path: Path) -> None:
    """Task YAML must never run code or read the environment, as `${oc.env:X}` would."""
    for node in _walk(_compose(path)):
        if isinstance(node, yaml.ScalarNode) and "${" in str(node.value):
            raise BenchregError(
                f"interpolation {node.value!r} in a task file",
                where=at(path, node.start_mark.line + 1),
                fix="task files may only name registered components; write the value out",
            )


def _deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def load_spec(name: str, extra_folders: Iterable[Path] = ()) -> tuple[TaskSpec, list[Path], Path]:
    """The entry ``name`` found, composed and validated (not bound): its spec, the files it was
    composed from and its own file. An entry must carry its own name (its path under the tasks
    folder); another name is one located error."""
    folders = task_folders(extra_folders)
    path = find_task_file(name, folders)
    if path is None:
        raise unknown_task(name, folders)
    data, sources = compose_entry(path, folders)
    spec = spec_from_mapping(data, sources, entry=path)
    expected = entry_name(path, folders)
    if expected is not None and spec.name != expected:
        raise BenchregError(
            f"the entry at {expected!r} says `name: {spec.name}`",
            where=locate_key(sources, ["name"]) or path,
            fix=f"write `name: {expected}` (an entry's name is its path under the tasks folder; "
            "other names go under `aliases`)",
        )
    return spec, list(sources), path


def entry_name(path: Path, folders: Iterable[Path]) -> str | None:
    """The name an entry file stands for: its path under its folder's entries, without `.yaml`."""
    for folder in folders:
        root = entries_root(folder).resolve()
        if path.resolve().is_relative_to(root):
            return path.resolve().relative_to(root).with_suffix("").as_posix()
    return None
