"""Offline systems: a predictions file, the task's baseline, and seeded random answers."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.system import PerSampleSystem, PredictionSetSystem, SystemContext


@registry.systems.register("predictions")
def predictions_system(cfg: Mapping[str, Any], ctx: SystemContext) -> PredictionSetSystem:
    """Answers read from a file by the task's prediction reader (``model=predictions``)."""
    path = cfg.get("path")
    if not path or path == "???":
        raise BenchregError(
            "model=predictions needs a file", fix="add model.path=<predictions file>"
        )
    resolved = Path(str(path)).expanduser()
    if not resolved.is_file():
        raise BenchregError("predictions file not found", where=resolved)
    reader = ctx.task.predictions
    if reader is None:
        raise BenchregError(
            f"task {ctx.task.name} names no prediction reader",
            fix="add `predictions: <reader>` to the task entry",
        )
    # model.params: reader options, checked like the entry's own
    reader = reader.with_params(dict(cfg.get("params") or {}), what="prediction reader")
    prediction_set = reader(resolved.resolve(), ctx.samples, ctx.task.name)
    return PredictionSetSystem(f"predictions:{resolved.name}", prediction_set)


@registry.systems.register("baseline")
def baseline_system(cfg: Mapping[str, Any], ctx: SystemContext) -> PerSampleSystem:
    baseline = ctx.task.baseline
    if baseline is None:
        raise BenchregError(
            f"task {ctx.task.name} has no offline baseline",
            fix="choose another model, e.g. model=random or model=predictions",
        )
    baseline = baseline.with_params(dict(cfg.get("params") or {}), what="baseline")
    answer = baseline(ctx)
    params = dict(baseline.params)
    identity = f"baseline:{baseline.name}" + (
        f":{json.dumps(params, sort_keys=True)}" if params else ""
    )
    system = PerSampleSystem(f"baseline:{baseline.name}", answer, identity)
    system.answers_from_inputs = True
    return system


@registry.systems.register("random")
def random_system(cfg: Mapping[str, Any], ctx: SystemContext) -> PerSampleSystem:
    draw = getattr(ctx.task.schema, "random", None)
    if draw is None:
        raise BenchregError(
            f"answer schema {ctx.task.answer_schema.name!r} cannot draw random answers",
            fix="choose another model",
        )
    seed = cfg.get("seed", 0)
    rng = random.Random(int(seed))
    system = PerSampleSystem(f"random(seed={seed})", lambda s: draw(s, rng))
    system.answers_from_inputs = True
    return system
