"""Run one task end to end, without Hydra: load -> ask a system -> parse/validate -> score.

:func:`arun_task` is the async entry point (usable inside a running event loop, e.g. a notebook
cell with ``await``); :func:`run_task` is its synchronous wrapper, which also works when called
from code that already runs an event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from loguru import logger

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.family import Family
from benchreg.core.io import confined, read_text
from benchreg.core.journal import Journal
from benchreg.core.metric import MetricValue
from benchreg.core.progress import Progress
from benchreg.core.reader import gc_paused
from benchreg.core.scoring import (
    family_counts,
    parse_and_check,
    resolve,
    score,
    status_counts,
)
from benchreg.core.spec import TaskSpec
from benchreg.core.system import (
    Labelled,
    System,
    SystemContext,
    SystemReport,
    check_answers,
)
from benchreg.core.types import (
    Dataset,
    Degraded,
    LoadContext,
    Message,
    Prediction,
    Request,
    Sample,
)
from benchreg.core.validation import Finding

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RunOptions:
    batch_size: int = 64
    limit: int | None = None
    n_boot: int = 1000
    seed: int = 0
    progress: bool = True
    cache: str = "read_write"  # model response cache: read_write | read_only | off
    cache_dir: str | None = None  # None: the default cache folder (see benchreg.systems)
    overwrite: bool = False  # replace a run folder that holds another (or a finished) run
    final: bool = False  # a final-acceptance run: frozen splits (retrieval `test`) may be read

    def result_options(self) -> dict[str, Any]:
        """The options that change a run's results (part of its fingerprint)."""
        return {"limit": self.limit, "n_boot": self.n_boot, "seed": self.seed, "final": self.final}


@dataclass(slots=True)
class RunResult:
    spec: TaskSpec
    view: str | None
    system_name: str  # display name (`model.label` when given)
    system_identity: str  # tells two models apart in a sweep (never the label)
    data_root: Path
    dataset: Dataset
    samples: list[Sample]
    predictions: list[Prediction]
    metrics: dict[str, MetricValue]  # output name -> value, n, denominator, CI
    primary: str  # output name of the primary metric
    per_sample: dict[str, Any]  # output name -> per-sample scores, where they exist
    statuses: dict[str, int]  # the shared status counts (they sum to n)
    counts: dict[str, int]  # the family's own counts
    system_report: SystemReport = field(default_factory=SystemReport)
    findings: list[Finding] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def data_root_for(spec: TaskSpec, roots: Mapping[str, Any]) -> Path:
    family: Family = registry.families.get(spec.family)
    configured = roots.get(spec.family)
    root = Path(str(configured)).expanduser() if configured else family.sample_root
    if "\0" in str(root) or not root.is_dir():
        raise BenchregError(
            f"data root for family {spec.family!r} is not a folder",
            where=root,
            fix=f"set roots.{spec.family}=<folder> or drop it to use the embedded sample",
        )
    return root.resolve()


def load_context(
    spec: TaskSpec, view: str | None, data_root: Path, *, final: bool = False
) -> LoadContext:
    return LoadContext(
        data_root=data_root,
        data=tuple(confined(Path(rel), data_root, what="data path") for rel in spec.data),
        view=view,
        params=spec.loader.params,
        task_name=spec.name,
        parser=_bound_parser(spec),
        final=final,
    )


def _bound_parser(spec: TaskSpec) -> Any:
    if spec.parser is None:
        return None
    parser = registry.parsers.get(spec.parser.name)
    params = dict(spec.parser.params)

    def read_gold(text: str, sample: Sample) -> Any:
        # gold given as text: a fallback read (Degraded) is still the gold, without the flag
        parsed = parser(text, sample, **params)
        return parsed.answer if isinstance(parsed, Degraded) else parsed

    return read_gold


def load_dataset(
    spec: TaskSpec, view: str | None, data_root: Path, *, final: bool = False
) -> Dataset:
    loader = registry.loaders.get(spec.loader.name)
    dataset = loader(load_context(spec, view, data_root, final=final))
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
    renderer = registry.prompt_renderers.get(spec.prompt.renderer)
    templates = {
        part: read_text(path) for part, path in template_files(spec, data_root).items()
    }
    return [renderer(sample, templates, view) for sample in samples]


def template_files(spec: TaskSpec, data_root: Path) -> dict[str, Path]:
    """The prompt template files of a task, checked to exist and to stay inside the release's
    prompt folder or the family's shipped one (found before any system is asked)."""
    if spec.prompt is None:
        return {}
    family: Family = registry.families.get(spec.family)
    out = {}
    for part, file in spec.prompt.templates.items():
        try:
            path = family.template_path(data_root, file)
        except FileNotFoundError:
            path = Path(file)
        roots = [r for r in (family.prompts_dir, data_root) if r is not None]
        inside = [r for r in roots if path.resolve().is_relative_to(r.resolve())]
        if not inside:
            raise BenchregError(
                f"prompt template {file!r} leads outside the prompt folders",
                fix="name a template file of the family's prompts/ folder",
            )
        if not path.is_file():
            raise BenchregError(
                f"prompt template {file!r} ({part}) not found",
                where=path,
                fix=f"templates live in {family.prompts_dir}",
            )
        out[part] = path
    return out


def build_system(
    spec: TaskSpec,
    view: str | None,
    data_root: Path,
    samples: Sequence[Sample],
    system_cfg: Mapping[str, Any],
    options: RunOptions = RunOptions(),
) -> System:
    ctx = SystemContext(spec, view, data_root, samples, options=asdict(options))
    system: System = registry.systems.get(str(system_cfg.get("name")))(system_cfg, ctx)
    label = system_cfg.get("label")
    return Labelled(system, str(label)) if label else system


@dataclass(slots=True)
class PreparedRun:
    """A task's data loaded and checked for one view: everything before a system is asked."""

    spec: TaskSpec
    view: str | None
    data_root: Path
    dataset: Dataset
    samples: list[Sample]
    findings: list[Finding]
    seconds: dict[str, float]


def prepare_run(
    spec: TaskSpec, *, view: str | None, roots: Mapping[str, Any], options: RunOptions
) -> PreparedRun:
    """Load the task's data and run its validators (bad input fails here, before any output)."""
    tic = time.perf_counter()
    view = spec.resolve_view(view)
    data_root = data_root_for(spec, roots)
    with gc_paused():
        dataset = load_dataset(spec, view, data_root, final=options.final)
        samples = dataset.samples[: options.limit] if options.limit else dataset.samples
        ctx = load_context(spec, view, data_root, final=options.final)
        findings = run_validators(spec, dataset, ctx)
    for warning in [*dataset.warnings, *map(str, findings)]:
        logger.warning(warning)
    seconds = {"load": time.perf_counter() - tic}
    return PreparedRun(spec, view, data_root, dataset, samples, findings, seconds)


def build_system_for(
    prepared: PreparedRun, system_cfg: Mapping[str, Any], options: RunOptions = RunOptions()
) -> System:
    """The system of a prepared run (a predictions file is read here: bad input fails early)."""
    with gc_paused():
        return build_system(
            prepared.spec, prepared.view, prepared.data_root, prepared.samples, system_cfg, options
        )


async def aexecute(
    prepared: PreparedRun,
    system: System,
    *,
    options: RunOptions = RunOptions(),
    journal: Journal | None = None,
) -> RunResult:
    """Ask the system for what the journal does not hold yet, then parse and score; the system
    is closed at the end, whatever happens."""
    spec, view, samples = prepared.spec, prepared.view, prepared.samples
    seconds = dict(prepared.seconds)
    tic = time.perf_counter()
    try:
        done = journal.load() if journal is not None else {}
        if done:
            logger.info(f"resuming: {len(done)} of {len(samples)} answers already journaled")
        with gc_paused():
            todo = [s for s in samples if s.id not in done]
            prompts = (
                render_prompts(spec, todo, view, prepared.data_root)
                if system.needs_prompts
                else [() for _ in todo]
            )
            requests = [Request(sample=s, messages=m) for s, m in zip(todo, prompts, strict=True)]
        answered = await _predict_in_batches(system, requests, options, journal)
        report = system.report()
    finally:
        if journal is not None:
            journal.close()
        await system.aclose()
    seconds["predict"] = time.perf_counter() - tic

    tic = time.perf_counter()
    with gc_paused():
        by_id = {**done, **{p.sample_id: p for p in answered}}
        predictions = [by_id[s.id] for s in samples]
        parse_and_check(spec, samples, predictions)
        resolve(spec, prepared.dataset, samples, predictions)
        scores = score(
            spec,
            samples,
            predictions,
            n_boot=options.n_boot,
            seed=options.seed,
            progress=options.progress,
        )
    seconds["score"] = time.perf_counter() - tic
    degraded = sum(1 for p in predictions if p.degraded)
    if degraded:
        logger.warning(
            f"{degraded} of {len(predictions)} answers were read only by a fallback "
            "(`degraded` in samples.jsonl says why); they are scored as given"
        )
    return RunResult(
        spec=spec,
        view=view,
        system_name=system.name,
        system_identity=system.identity,
        data_root=prepared.data_root,
        dataset=prepared.dataset,
        samples=samples,
        predictions=predictions,
        metrics=scores.values,
        primary=scores.primary,
        per_sample=scores.per_sample,
        statuses=status_counts(predictions),
        counts=family_counts(spec, samples, predictions),
        system_report=report,
        findings=prepared.findings,
        seconds=seconds,
    )


async def arun_task(
    spec: TaskSpec,
    *,
    view: str | None,
    system_cfg: Mapping[str, Any],
    roots: Mapping[str, Any],
    options: RunOptions = RunOptions(),
) -> RunResult:
    """Load the task's data, ask the system, score the answers (the async entry point)."""
    prepared = prepare_run(spec, view=view, roots=roots, options=options)
    system = build_system_for(prepared, system_cfg, options)
    return await aexecute(prepared, system, options=options)


def run_task(
    spec: TaskSpec,
    *,
    view: str | None,
    system_cfg: Mapping[str, Any],
    roots: Mapping[str, Any],
    options: RunOptions = RunOptions(),
) -> RunResult:
    """Synchronous :func:`arun_task`; inside a running event loop it runs in a worker thread."""
    return run_sync(arun_task(spec, view=view, system_cfg=system_cfg, roots=roots, options=options))


def run_sync(job: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, even inside a running event loop."""
    box: list[T] = []

    async def main() -> None:
        # The result is handed over beside the task, never as its result: on Python 3.11,
        # asyncio.run() reprs its finished main task (result included) when it restores the
        # SIGINT handler, which for a 100k-sample RunResult took seconds and a huge string.
        box.append(await job)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(main())
    else:
        with ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(asyncio.run, main()).result()
    return box[0]


async def _predict_in_batches(
    system: System,
    requests: list[Request],
    options: RunOptions,
    journal: Journal | None = None,
) -> list[Prediction]:
    """Hand requests over in batches, checking the contract and journaling every batch."""
    out: list[Prediction] = []
    size = max(1, options.batch_size)
    progress = Progress(f"{system.name}: answering", len(requests), enabled=options.progress)
    try:
        for start in range(0, len(requests), size):
            batch = requests[start : start + size]
            answers = check_answers(system, batch, await system.predict(batch))
            if journal is not None:
                journal.append(answers)
            out.extend(answers)
            progress.advance(len(batch))
    finally:
        progress.finish()
    return out
