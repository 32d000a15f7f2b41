"""Built-in systems: `predictions`, `baseline`, `random` (the contract is benchreg.core.system)."""

from benchreg.core.system import BaseSystem, PerSampleSystem, SystemContext
from benchreg.systems import offline  # noqa: F401  (registers the built-in systems)

__all__ = ["BaseSystem", "PerSampleSystem", "SystemContext"]
