"""benchreg: a declarative, config-driven benchmark registry.

Public API (no Hydra needed)::

    from benchreg import load_task, run_task, RunOptions
    spec = load_task("molp2s/gap")
    result = run_task(spec, view="counterfactual", system_cfg={"name": "baseline"}, roots={})
"""

from benchreg.core.errors import BenchregError, ParseError
from benchreg.core.run import RunOptions, RunResult, run_task
from benchreg.core.spec import TaskSpec
from benchreg.core.tasks import load_task

__version__ = "0.1.0"

__all__ = [
    "BenchregError",
    "ParseError",
    "RunOptions",
    "RunResult",
    "TaskSpec",
    "__version__",
    "load_task",
    "run_task",
]
