"""Data-set checks (`mode=validate`): findings a validator reports about a loaded data set.

A validator is registered by name (`registry.validators`) as
``fn(dataset, ctx, **params) -> list[Finding]`` and named in a task entry's `validators`. The same
validators also run on every load; their findings are then logged as warnings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Finding:
    where: str  # record id, or file:line
    message: str
    severity: Literal["error", "warning", "info"] = "warning"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"
