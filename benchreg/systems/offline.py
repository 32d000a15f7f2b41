"""Offline systems: a predictions file, the task's baseline, and seeded random answers."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.types import Prediction, PredictionSet, Request
from benchreg.systems.base import PerSampleSystem, SystemContext


class PredictionsFileSystem:
    """Answers read from a file by the task's prediction reader (``model=predictions``)."""

    needs_prompts = False

    def __init__(self, path: Path, ctx: SystemContext) -> None:
        if ctx.spec.predictions is None:
            raise BenchregError(
                f"task {ctx.spec.name} names no prediction reader",
                fix="add `predictions: <reader>` to the task entry",
            )
        reader = registry.prediction_readers.get(ctx.spec.predictions.name)
        self.name = f"predictions:{path.name}"
        self.prediction_set: PredictionSet = reader(
            path, ctx.samples, ctx.spec.name, **ctx.spec.predictions.params
        )

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        by_id = self.prediction_set.by_id
        return [by_id[r.sample.id] for r in requests if r.sample.id in by_id]


@registry.systems.register("predictions")
def predictions_system(cfg: Mapping[str, Any], ctx: SystemContext) -> PredictionsFileSystem:
    path = cfg.get("path")
    if not path or path == "???":
        raise BenchregError(
            "model=predictions needs a file", fix="add model.path=<predictions file>"
        )
    resolved = Path(str(path)).expanduser()
    if not resolved.is_file():
        raise BenchregError("predictions file not found", where=resolved)
    return PredictionsFileSystem(resolved.resolve(), ctx)


@registry.systems.register("baseline")
def baseline_system(cfg: Mapping[str, Any], ctx: SystemContext) -> PerSampleSystem:
    ref = ctx.spec.baseline
    if ref is None:
        raise BenchregError(
            f"task {ctx.spec.name} has no offline baseline",
            fix="choose another model, e.g. model=random or model=predictions",
        )
    make = registry.baselines.get(ref.name)
    params = {**ref.params, **dict(cfg.get("params") or {})}
    return PerSampleSystem(f"baseline:{ref.name}", make(ctx, **params))


@registry.systems.register("random")
def random_system(cfg: Mapping[str, Any], ctx: SystemContext) -> PerSampleSystem:
    schema = registry.answer_schemas.get(ctx.spec.answer_schema.name)
    draw = getattr(schema, "random", None)
    if draw is None:
        raise BenchregError(
            f"answer schema {ctx.spec.answer_schema.name!r} cannot draw random answers",
            fix="choose another model",
        )
    rng = random.Random(int(cfg.get("seed", 0)))
    return PerSampleSystem(f"random(seed={cfg.get('seed', 0)})", lambda s: draw(s, rng))
