"""Data-set checks (`mode=validate`): findings a validator reports about a loaded data set.

A validator is registered by name (`registry.validators`) as
``fn(dataset, ctx, **params) -> list[Finding]`` and named in a task entry's `validators`. The same
validators also run on every load; their findings are then logged as warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Finding:
    where: str  # record id, or file:line
    message: str
    severity: Literal["error", "warning", "info"] = "warning"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def cached_findings(
    kind: str,
    files: Sequence[Path],
    key: Mapping[str, Any],
    find: Callable[[], list[Finding]],
    *,
    cache: bool = True,
) -> list[Finding]:
    """A validator's findings through the loading door (:mod:`benchreg.core.load`): those of an
    earlier check of the same file contents with the same ``key`` when the cache has them, else
    ``find()``'s. ``key`` must name everything the findings depend on besides the files' bytes
    (params, parser, ...)."""
    from benchreg.core.load import LoadPlan, load

    def rows() -> list[tuple[str, str, str]]:
        return [(f.where, f.message, f.severity) for f in find()]

    loaded = load(LoadPlan(kind, tuple(files), rows, key), cache=cache)
    return [Finding(*row) for row in loaded.value]
