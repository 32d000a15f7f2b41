"""What a family hands the door (:class:`LoadPlan`) and what it gets back (:class:`Loaded`)."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loguru import logger

from benchreg.core.load._bulk import gc_paused
from benchreg.core.load._cache import Entry, cache_enabled, worth_keeping

Source = Literal["read", "cache", "memory"]
MEMORY_ENTRIES = 8  # values kept in memory for the next job of a sweep (PromptCBLUE: 5 a job)


@dataclass(frozen=True)
class LoadPlan:
    """What a loader builds and from what.

    ``read`` builds the value from the files in this process and is the one place where the
    family's rules are checked: it raises a located error for the first problem. The value must
    be plain data (dicts, lists, tuples, strings, numbers, None, bools) for the disk cache to
    keep it. ``key`` names everything besides the files' bytes that the value depends on
    (view, params, the parser that read gold text, a format version). ``disk=False``: kept in
    memory only, for the next job of a sweep (a file every job reads, whose value a next run
    does not need: what it is built into is kept instead)."""

    name: str
    files: tuple[Path, ...]
    read: Callable[[], Any]
    key: Mapping[str, Any] = field(default_factory=dict)
    disk: bool = True


@dataclass(frozen=True)
class Loaded:
    value: Any
    source: Source  # read from the files, or the cache's (disk) or this process's (memory)


_memory: OrderedDict[tuple[Any, ...], Any] = OrderedDict()


def load(plan: LoadPlan, *, cache: bool = True) -> Loaded:
    """The value of ``plan``: kept from before when its files are unchanged, else read."""
    use_cache = cache and cache_enabled()
    identity = _identity(plan) if use_cache else None
    if identity is not None and identity in _memory:
        _memory.move_to_end(identity)
        return Loaded(_memory[identity], "memory")
    with gc_paused():
        entry = None
        if identity is not None and plan.disk and worth_keeping(plan.files):
            entry = Entry(plan.name, plan.key, plan.files)
        value = entry.read() if entry is not None else None
        if value is not None:
            source: Source = "cache"
            logger.info(
                f"{plan.files[0].name}: {plan.name} read back from the loaded-data cache (same "
                f"file contents as an earlier run; run.data_cache=false reads the files again)"
            )
        else:
            value, source = plan.read(), "read"
            if entry is not None:
                entry.write(value)
    if identity is not None:
        _memory[identity] = value
        while len(_memory) > MEMORY_ENTRIES:
            _memory.popitem(last=False)
    return Loaded(value, source)


def forget() -> None:
    """Drop the values kept in memory (a sweep's end: its jobs are done)."""
    _memory.clear()


def _identity(plan: LoadPlan) -> tuple[Any, ...] | None:
    """The plan's files as they are now (an unchanged file keeps its path, size and change
    times), or None when one cannot be read: the read then reports it."""
    try:
        stats = [os.stat(path) for path in plan.files]
    except OSError:
        return None
    files = tuple(
        (str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        for path, st in zip(plan.files, stats, strict=True)
    )
    return plan.name, json.dumps(plan.key, sort_keys=True, default=str), files
