"""Built-in systems: `predictions`, `baseline`, `random` (offline), `openai` and `llama_cpp`
(model servers; they need the `models` / `llama` extras only when used).

The contract is benchreg.core.system."""

from benchreg.core.system import BaseSystem, PerSampleSystem, SystemContext
from benchreg.systems import llama_cpp, offline, openai  # noqa: F401  (registers the systems)

__all__ = ["BaseSystem", "PerSampleSystem", "SystemContext"]
