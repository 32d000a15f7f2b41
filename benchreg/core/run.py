"""Run one task end to end, without Hydra: load -> ask a system -> parse/validate -> score."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.family import Family
from benchreg.core.scoring import (
    MetricSummary,
    align_predictions,
    compute_counts,
    compute_metrics,
    parse_and_check,
)
from benchreg.core.spec import TaskSpec
from benchreg.core.types import (
    Dataset,
    LoadContext,
    Message,
    Prediction,
    PredictionSet,
    Request,
    Sample,
)
from benchreg.core.validation import Finding


@dataclass(frozen=True, slots=True)
class RunOptions:
    batch_size: int = 64
    limit: int | None = None
    n_boot: int = 1000
    seed: int = 0
    progress: bool = True


@dataclass(slots=True)
class RunResult:
    spec: TaskSpec
    view: str | None
    system_name: str
    data_root: Path
    dataset: Dataset
    samples: list[Sample]
    predictions: list[Prediction]
    prediction_set: PredictionSet | None
    metrics: dict[str, MetricSummary]
    per_sample: dict[str, list[float]]
    counts: dict[str, int]
    findings: list[Finding] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def data_root_for(spec: TaskSpec, roots: Mapping[str, Any]) -> Path:
    family: Family = registry.families.get(spec.family)
    configured = roots.get(spec.family)
    root = Path(str(configured)).expanduser() if configured else family.sample_root
    if not root.is_dir():
        raise BenchregError(
            f"data root for family {spec.family!r} is not a folder",
            where=root,
            fix=f"set roots.{spec.family}=<folder> or drop it to use the embedded sample",
        )
    return root.resolve()


def load_context(spec: TaskSpec, view: str | None, data_root: Path) -> LoadContext:
    return LoadContext(
        data_root=data_root,
        data=tuple(data_root / rel for rel in spec.data),
        view=view,
        params=spec.loader.params,
        task_name=spec.name,
    )


def load_dataset(spec: TaskSpec, view: str | None, data_root: Path) -> Dataset:
    loader = registry.loaders.get(spec.loader.name)
    dataset = loader(load_context(spec, view, data_root))
    if not dataset.samples:
        raise BenchregError(
            f"task {spec.name} (view {view}) has no samples",
            where=data_root,
            fix="check the data root and the task's `data` paths",
        )
    return dataset


def run_validators(spec: TaskSpec, dataset: Dataset, ctx: LoadContext) -> list[Finding]:
    """Findings of every validator the task names (data-set consistency checks)."""
    findings: list[Finding] = []
    for ref in spec.validators:
        findings += registry.validators.get(ref.name)(dataset, ctx, **ref.params)
    return findings


def render_prompts(
    spec: TaskSpec, samples: Sequence[Sample], view: str | None, data_root: Path
) -> list[tuple[Message, ...]]:
    if spec.prompt is None:
        return [() for _ in samples]
    family: Family = registry.families.get(spec.family)
    renderer = registry.prompt_renderers.get(spec.prompt.renderer)
    templates = {
        part: family.template_path(data_root, file).read_text(encoding="utf-8")
        for part, file in spec.prompt.templates.items()
    }
    return [renderer(sample, templates, view) for sample in samples]


def run_task(
    spec: TaskSpec,
    *,
    view: str | None,
    system_cfg: Mapping[str, Any],
    roots: Mapping[str, Any],
    options: RunOptions = RunOptions(),
) -> RunResult:
    from benchreg.systems import SystemContext

    seconds: dict[str, float] = {}
    tic = time.perf_counter()
    view = spec.resolve_view(view)
    data_root = data_root_for(spec, roots)
    dataset = load_dataset(spec, view, data_root)
    samples = dataset.samples[: options.limit] if options.limit else dataset.samples
    findings = run_validators(spec, dataset, load_context(spec, view, data_root))
    for warning in [*dataset.warnings, *map(str, findings)]:
        logger.warning(warning)
    seconds["load"] = time.perf_counter() - tic

    tic = time.perf_counter()
    ctx = SystemContext(spec=spec, view=view, data_root=data_root, samples=samples)
    system = registry.systems.get(str(system_cfg.get("name")))(system_cfg, ctx)
    prompts = (
        render_prompts(spec, samples, view, data_root)
        if getattr(system, "needs_prompts", False)
        else [() for _ in samples]
    )
    requests = [Request(sample=s, messages=m) for s, m in zip(samples, prompts, strict=True)]
    answered = asyncio.run(_predict_in_batches(system, requests, options))
    prediction_set: PredictionSet | None = getattr(system, "prediction_set", None)
    seconds["predict"] = time.perf_counter() - tic

    tic = time.perf_counter()
    predictions = align_predictions(samples, {p.sample_id: p for p in answered})
    parse_and_check(spec, samples, predictions)
    metrics, per_sample = compute_metrics(
        spec, samples, predictions, n_boot=options.n_boot, seed=options.seed
    )
    counts = compute_counts(spec, samples, predictions, prediction_set)
    seconds["score"] = time.perf_counter() - tic
    return RunResult(
        spec=spec,
        view=view,
        system_name=system.name,
        data_root=data_root,
        dataset=dataset,
        samples=samples,
        predictions=predictions,
        prediction_set=prediction_set,
        metrics=metrics,
        per_sample=per_sample,
        counts=counts,
        findings=findings,
        seconds=seconds,
    )


PROGRESS_EVERY_S = 5.0


async def _predict_in_batches(
    system: Any, requests: list[Request], options: RunOptions
) -> list[Prediction]:
    """Hand requests over in batches; log progress every few seconds on long runs."""
    out: list[Prediction] = []
    size = max(1, options.batch_size)
    total = len(requests)
    start_time = last_log = time.perf_counter()
    for start in range(0, total, size):
        out.extend(await system.predict(requests[start : start + size]))
        now = time.perf_counter()
        done = min(start + size, total)
        if options.progress and (
            now - last_log >= PROGRESS_EVERY_S
            or (done == total and now - start_time >= PROGRESS_EVERY_S)
        ):
            rate = done / (now - start_time)
            logger.info(f"{system.name}: {done}/{total} samples answered ({rate:.1f}/s)")
            last_log = now
    return out
