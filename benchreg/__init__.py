"""benchreg: a declarative, config-driven benchmark registry.

The public API (no Hydra needed)::

    from benchreg import load_task, run_task
    task = load_task("molp2s/gap")               # composed, validated and bound once
    result = run_task(task, view="counterfactual")  # the task's baseline on the embedded sample
    print(result.metrics["accuracy"].value, result.statuses)

Everything named here is public and documented in docs/api.md; so are the modules listed there
(what a family or a plug-in imports). Other modules are implementation details.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from benchreg.core.version import __version__

# name -> the module that defines it, imported on first use (PEP 562): a process that needs one
# module of the package (a load worker, `--version`) does not import all of them
_EXPORTS = {
    "registry": "benchreg.core.registry",  # the module itself
    "BenchregError": "benchreg.core.errors",
    "ParseError": "benchreg.core.errors",
    "MeanMetric": "benchreg.core.metric",
    "Metric": "benchreg.core.metric",
    "MetricValue": "benchreg.core.metric",
    "RunOptions": "benchreg.core.options",
    "RunResult": "benchreg.core.result",
    "Evaluation": "benchreg.core.run",
    "RunOutput": "benchreg.core.run",
    "aevaluate": "benchreg.core.run",
    "arun_task": "benchreg.core.run",
    "evaluate": "benchreg.core.run",
    "run_task": "benchreg.core.run",
    "TaskSpec": "benchreg.core.spec",
    "BaseSystem": "benchreg.core.system",
    "PerSampleSystem": "benchreg.core.system",
    "System": "benchreg.core.system",
    "SystemContext": "benchreg.core.system",
    "SystemReport": "benchreg.core.system",
    "Bound": "benchreg.core.task",
    "BoundMetric": "benchreg.core.task",
    "Task": "benchreg.core.task",
    "bind": "benchreg.core.task",
    "load_task": "benchreg.core.task",
    "Checked": "benchreg.core.types",
    "Dataset": "benchreg.core.types",
    "Degraded": "benchreg.core.types",
    "LoadContext": "benchreg.core.types",
    "Message": "benchreg.core.types",
    "Prediction": "benchreg.core.types",
    "PredictionSet": "benchreg.core.types",
    "Request": "benchreg.core.types",
    "Sample": "benchreg.core.types",
    "Status": "benchreg.core.types",
}

if TYPE_CHECKING:
    from benchreg.core import registry
    from benchreg.core.errors import (
        BenchregError,
        ParseError,
    )
    from benchreg.core.metric import (
        MeanMetric,
        Metric,
        MetricValue,
    )
    from benchreg.core.options import (
        RunOptions,
    )
    from benchreg.core.result import (
        RunResult,
    )
    from benchreg.core.run import (
        Evaluation,
        RunOutput,
        aevaluate,
        arun_task,
        evaluate,
        run_task,
    )
    from benchreg.core.spec import (
        TaskSpec,
    )
    from benchreg.core.system import (
        BaseSystem,
        PerSampleSystem,
        System,
        SystemContext,
        SystemReport,
    )
    from benchreg.core.task import (
        Bound,
        BoundMetric,
        Task,
        bind,
        load_task,
    )
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'benchreg' has no attribute {name!r}")
    imported = importlib.import_module(module)
    value = imported if module.rsplit(".", 1)[-1] == name else getattr(imported, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


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
