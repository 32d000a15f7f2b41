"""The steps of a run before any system is asked: the data root, the loaded and checked data
set, the prompt templates, and the system itself. :mod:`benchreg.core.run` strings them
together; every mode (run, validate, prompts) starts with :func:`prepare`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.io import confined, read_text
from benchreg.core.load import gc_paused
from benchreg.core.options import DEFAULT_OPTIONS, RunOptions
from benchreg.core.system import Labelled, System, SystemContext
from benchreg.core.task import Task
from benchreg.core.types import Dataset, Degraded, LoadContext, Message, Sample
from benchreg.core.validation import Finding


def data_root_for(task: Task, roots: Mapping[str, Any]) -> Path:
    configured = roots.get(task.family)
    root = Path(str(configured)).expanduser() if configured else task.family_info.sample_root
    if "\0" in str(root) or not root.is_dir():
        raise BenchregError(
            f"data root for family {task.family!r} is not a folder",
            where=root,
            fix=f"set roots.{task.family}=<folder> or drop it to use the embedded sample",
        )
    return root.resolve()


def load_context(
    task: Task, view: str | None, data_root: Path, *, cache: bool = True
) -> LoadContext:
    return LoadContext(
        data_root=data_root,
        data=tuple(confined(Path(rel), data_root, what="data path") for rel in task.data),
        view=view,
        params=task.loader.params,
        task_name=task.name,
        parser=_gold_parser(task),
        parser_ref=_parser_ref(task),
        cache=cache,
    )


def _parser_ref(task: Task) -> str | None:
    parser = task.parser
    if parser is None:
        return None
    return json.dumps([parser.name, dict(parser.params)], sort_keys=True, default=str)


def _gold_parser(task: Task) -> Any:
    parser = task.parser
    if parser is None:
        return None

    def read_gold(text: str, sample: Sample) -> Any:
        # gold given as text: a fallback read (Degraded) is still the gold, without the flag
        parsed = parser(text, sample)
        return parsed.answer if isinstance(parsed, Degraded) else parsed

    return read_gold


def guard_frozen(task: Task, view: str | None, *, final: bool) -> None:
    """A view the task holds back for final acceptance is read only in a final run."""
    if view in task.frozen_views and not final:
        raise BenchregError(
            f"the {view!r} view of {task.name} is frozen (final acceptance only); "
            "nothing of it was read",
            where=f"override view={view}",
            fix=f"use view={task.default_view or 'another view'} while tuning; for the final "
            "acceptance run add run.final=true",
        )


def load_dataset(
    task: Task, view: str | None, data_root: Path, *, final: bool = False, cache: bool = True
) -> Dataset:
    guard_frozen(task, view, final=final)
    dataset = task.loader.component(load_context(task, view, data_root, cache=cache))
    if not dataset.samples:
        raise BenchregError(
            f"task {task.name} (view {view}) has no samples",
            where=data_root,
            fix="check the data root and the task's `data` paths",
        )
    return dataset


def run_validators(task: Task, dataset: Dataset, ctx: LoadContext) -> list[Finding]:
    """Findings of every validator the task names (data-set consistency checks)."""
    findings: list[Finding] = []
    for validator in task.validators:
        findings += validator(dataset, ctx)
    return findings


def template_files(task: Task, data_root: Path) -> dict[str, Path]:
    """The prompt template files of a task, checked to exist and to stay inside the release's
    prompt folder or the family's shipped one (found before any system is asked)."""
    if task.prompt is None:
        return {}
    family = task.family_info
    out = {}
    for part, file in task.prompt.templates.items():
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


@dataclass(slots=True)
class PreparedRun:
    """A task's data loaded and checked for one view: everything before a system is asked."""

    task: Task
    view: str | None
    data_root: Path
    dataset: Dataset
    samples: list[Sample]
    findings: list[Finding]
    templates: dict[str, str] = field(default_factory=dict)  # prompt part -> template text
    seconds: dict[str, float] = field(default_factory=dict)

    def render_prompts(self, samples: Sequence[Sample]) -> list[tuple[Message, ...]]:
        return _render(self.task, samples, self.templates, self.view)


def render_prompts(
    task: Task, samples: Sequence[Sample], view: str | None, data_root: Path
) -> list[tuple[Message, ...]]:
    """The prompts of ``samples``, with the templates read from their files now (a prepared
    run has them read already: :meth:`PreparedRun.render_prompts`)."""
    templates = {part: read_text(path) for part, path in template_files(task, data_root).items()}
    return _render(task, samples, templates, view)


def _render(
    task: Task, samples: Sequence[Sample], templates: Mapping[str, str], view: str | None
) -> list[tuple[Message, ...]]:
    if task.prompt is None:
        return [() for _ in samples]
    return [task.prompt(sample, templates, view) for sample in samples]


def prepare(
    task: Task,
    *,
    view: str | None,
    roots: Mapping[str, Any],
    options: RunOptions,
    announce: bool = True,
) -> PreparedRun:
    """Load the task's data, run its validators and read its prompt templates (bad input fails
    here, before any output). ``announce``: log the loader's warnings and the findings."""
    tic = time.perf_counter()
    view = task.resolve_view(view)
    data_root = data_root_for(task, roots)
    with gc_paused():
        cache = options.data_cache
        dataset = load_dataset(task, view, data_root, final=options.final, cache=cache)
        samples = dataset.samples[: options.limit] if options.limit else dataset.samples
        findings = run_validators(task, dataset, load_context(task, view, data_root, cache=cache))
    for warning in [*dataset.warnings, *map(str, findings)] if announce else []:
        logger.warning(warning)
    templates = {part: read_text(path) for part, path in template_files(task, data_root).items()}
    seconds = {"load": time.perf_counter() - tic}
    return PreparedRun(task, view, data_root, dataset, samples, findings, templates, seconds)


def build_system(
    prepared: PreparedRun, system_cfg: Mapping[str, Any], options: RunOptions = DEFAULT_OPTIONS
) -> System:
    """The system of a prepared run (a predictions file is read here: bad input fails early)."""
    ctx = SystemContext(
        prepared.task, prepared.view, prepared.data_root, prepared.samples, options=asdict(options)
    )
    with gc_paused():
        system: System = registry.systems.get(str(system_cfg.get("name")))(system_cfg, ctx)
    label = system_cfg.get("label")
    return Labelled(system, str(label)) if label else system
