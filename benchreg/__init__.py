"""benchreg: a declarative, config-driven benchmark registry.

The public API (no Hydra needed)::

    from benchreg import load_task, run_task
    task = load_task("molp2s/gap")               # composed, validated and bound once
    result = run_task(task, view="counterfactual")  # the task's baseline on the embedded sample
    print(result.metrics["accuracy"].value, result.statuses)

Everything named here is public and documented in docs/api.md; so are the modules listed there
(what a family or a plug-in imports). Other modules are implementation details.
"""

from benchreg.core import registry
from benchreg.core.errors import BenchregError, ParseError
from benchreg.core.metric import MeanMetric, Metric, MetricValue
from benchreg.core.options import RunOptions
from benchreg.core.result import RunResult
from benchreg.core.run import (
    Evaluation,
    RunOutput,
    aevaluate,
    arun_task,
    evaluate,
    run_task,
)
from benchreg.core.spec import TaskSpec
from benchreg.core.system import (
    BaseSystem,
    PerSampleSystem,
    System,
    SystemContext,
    SystemReport,
)
from benchreg.core.task import Bound, BoundMetric, Task, bind, load_task
from benchreg.core.types import (
    Checked,
    Dataset,
    Degraded,
    LoadContext,
    Message,
    Prediction,
    PredictionSet,
    Request,
    Sample,
    Status,
)
from benchreg.core.version import __version__

__all__ = [
    "BaseSystem",
    "BenchregError",
    "Bound",
    "BoundMetric",
    "Checked",
    "Dataset",
    "Degraded",
    "Evaluation",
    "LoadContext",
    "MeanMetric",
    "Message",
    "Metric",
    "MetricValue",
    "ParseError",
    "PerSampleSystem",
    "Prediction",
    "PredictionSet",
    "Request",
    "RunOptions",
    "RunOutput",
    "RunResult",
    "Sample",
    "Status",
    "System",
    "SystemContext",
    "SystemReport",
    "Task",
    "TaskSpec",
    "__version__",
    "aevaluate",
    "arun_task",
    "bind",
    "evaluate",
    "load_task",
    "registry",
    "run_task",
]
