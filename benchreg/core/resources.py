"""Where the app config and the task registry live: in the wheel, or in a source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # the benchreg package folder


@cache
def conf_dir() -> Path:
    return _first_dir(_PACKAGE / "_conf", _PACKAGE.parent / "conf")


@cache
def tasks_dir() -> Path:
    return _first_dir(_PACKAGE / "_tasks", _PACKAGE.parent / "tasks")


def _first_dir(*candidates: Path) -> Path:
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"benchreg resources not found in {[str(c) for c in candidates]}")
