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
    ref = ctx.spec.predictions
    if ref is None:
        raise BenchregError(
            f"task {ctx.spec.name} names no prediction reader",
            fix="add `predictions: <reader>` to the task entry",
        )
    params = {**ref.params, **dict(cfg.get("params") or {})}  # model.params: reader options
    prediction_set = registry.prediction_readers.build(
        ref.name, params, resolved.resolve(), ctx.samples, ctx.spec.name
    )
    return PredictionSetSystem(f"predictions:{resolved.name}", prediction_set)


@registry.systems.register("baseline")
def baseline_system(cfg: Mapping[str, Any], ctx: SystemContext) -> PerSampleSystem:
    ref = ctx.spec.baseline
    if ref is None:
        raise BenchregError(
            f"task {ctx.spec.name} has no offline baseline",
            fix="choose another model, e.g. model=random or model=predictions",
        )
    params = {**ref.params, **dict(cfg.get("params") or {})}
    answer = registry.baselines.build(ref.name, params, ctx)
    identity = f"baseline:{ref.name}" + (f":{json.dumps(params, sort_keys=True)}" if params else "")
    return PerSampleSystem(f"baseline:{ref.name}", answer, identity)


@registry.systems.register("random")
def random_system(cfg: Mapping[str, Any], ctx: SystemContext) -> PerSampleSystem:
    schema = registry.answer_schemas.get(ctx.spec.answer_schema.name)
    draw = getattr(schema, "random", None)
    if draw is None:
        raise BenchregError(
            f"answer schema {ctx.spec.answer_schema.name!r} cannot draw random answers",
            fix="choose another model",
        )
    seed = cfg.get("seed", 0)
    rng = random.Random(int(seed))
    return PerSampleSystem(f"random(seed={seed})", lambda s: draw(s, rng))
