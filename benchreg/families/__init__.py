"""Benchmark families. Each sub-package registers its components when imported."""

from __future__ import annotations

import importlib

BUILTIN_FAMILIES = ("molp2s", "cblue", "reaction_mc")

_loaded = False


def load_builtin_families() -> None:
    """Import every built-in family once, so that its components are registered."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in BUILTIN_FAMILIES:
        try:
            importlib.import_module(f"benchreg.families.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"benchreg.families.{name}":
                raise
