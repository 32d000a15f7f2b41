"""Systems answer samples. Built-ins: `predictions`, `baseline`, `random`."""

from benchreg.systems import offline  # noqa: F401  (registers the built-in systems)
from benchreg.systems.base import PerSampleSystem, SystemContext

__all__ = ["PerSampleSystem", "SystemContext"]
