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
) -> list[Finding]:
    """A validator's findings kept in the loaded-data cache (:mod:`benchreg.core.checkcache`):
    those of an earlier check of the same file contents with the same ``key`` (said in the
    log), else ``find()``'s, kept for the next run. ``key`` must name everything the findings
    depend on besides the files' bytes (params, parser, ...)."""
    from loguru import logger

    from benchreg.core import checkcache

    cached = checkcache.loaded(kind, files, key)
    if cached is not None:
        logger.info(
            f"{Path(files[0]).name}: {kind} findings ({len(cached)}) reused from an earlier "
            f"check of the same file contents (cache {checkcache.cache_dir()})"
        )
        return [Finding(*row) for row in cached]
    findings = find()
    rows = [(f.where, f.message, f.severity) for f in findings]
    checkcache.store_loaded(kind, files, rows, key)
    return findings
