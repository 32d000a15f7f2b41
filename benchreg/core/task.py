"""A task bound once: the validated spec plus its resolved, param-checked components.

:func:`load_task` composes an entry (``benchreg.core.entries``), validates it as a
:class:`TaskSpec` and :func:`bind`\\ s it: every component name is looked up in its registry and
every param checked (by name, type and, where the entry alone must supply them, presence)
exactly once, with errors located at the entry's file:line. The run, the scorer and the systems
then use the :class:`Task`'s components and never look a name up again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from benchreg.core import registry
from benchreg.core.entries import load_spec, locate_key, locate_value
from benchreg.core.errors import BenchregError, UnknownComponentError
from benchreg.core.family import Family
from benchreg.core.metric import Metric
from benchreg.core.params import check_params
from benchreg.core.spec import ComponentRef, MetricRef, TaskSpec
from benchreg.core.types import AnswerSchema, Message, Sample

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Bound(Generic[T]):
    """A registered component with the params the task entry gives it.

    Calling it passes the params as keywords after the positional arguments; a loader (which
    reads its params from the :class:`~benchreg.core.types.LoadContext`) is called through
    ``component`` instead."""

    name: str
    component: T
    params: Mapping[str, Any] = field(default_factory=dict)
    n_args: int = 0

    def __call__(self, *args: Any) -> Any:
        return self.component(*args, **self.params)  # type: ignore[operator]

    def with_params(self, extra: Mapping[str, Any], *, what: str) -> Bound[T]:
        """The same component with ``extra`` params (e.g. `model.params`) over the entry's,
        checked as the entry's are, and complete."""
        merged = {**self.params, **extra}
        check_params(f"{what} {self.name!r}", self.component, merged, self.n_args, complete=True)
        return replace(self, params=merged)


@dataclass(frozen=True, slots=True)
class BoundMetric:
    """A task's metric, built with its params, its output names settled."""

    ref: MetricRef
    metric: Metric
    names: tuple[str, ...]  # output names (a single value may be renamed by `label`)

    @property
    def name(self) -> str:
        return self.ref.name

    @property
    def params(self) -> Mapping[str, Any]:
        return self.ref.params

    @property
    def primary_name(self) -> str:
        return self.names[self.metric.names.index(self.metric.primary)]


@dataclass(frozen=True, slots=True)
class BoundPrompt:
    """The prompt renderer and the template file names it fills (found per data root)."""

    name: str
    component: Any
    templates: Mapping[str, str]

    def __call__(
        self, sample: Sample, templates: Mapping[str, str], view: str | None
    ) -> tuple[Message, ...]:
        return tuple(self.component(sample, templates, view))


@dataclass(frozen=True, slots=True)
class Task:
    """A task entry with every component resolved (what :func:`load_task` returns)."""

    spec: TaskSpec
    family_info: Family
    loader: Bound[Any]
    answer_schema: Bound[AnswerSchema]
    metrics: tuple[BoundMetric, ...]
    parser: Bound[Any] | None = None
    predictions: Bound[Any] | None = None
    resolver: Bound[Any] | None = None
    counts: Bound[Any] | None = None
    prompt: BoundPrompt | None = None
    baseline: Bound[Any] | None = None
    analyses: tuple[Bound[Any], ...] = ()
    validators: tuple[Bound[Any], ...] = ()
    sources: tuple[Path, ...] = ()  # the YAML files composed into the entry, in merge order

    # --- the spec's plain facts -----------------------------------------------------------
    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def family(self) -> str:
        return self.spec.family

    @property
    def description(self) -> str:
        return self.spec.description

    @property
    def views(self) -> list[str]:
        return self.spec.views

    @property
    def default_view(self) -> str | None:
        return self.spec.default_view

    @property
    def frozen_views(self) -> list[str]:
        return self.spec.frozen_views

    @property
    def data(self) -> list[str]:
        return self.spec.data

    @property
    def aliases(self) -> list[str]:
        return self.spec.aliases

    @property
    def generation(self) -> dict[str, Any]:
        """The entry's generation settings (`generation:`: max_tokens, stop, temperature,
        system), the ones it gives only; a model system puts `model.*` over them."""
        return self.spec.generation.given() if self.spec.generation is not None else {}

    @property
    def schema(self) -> AnswerSchema:
        """The answer schema itself (``check(answer, sample)``, optionally ``random``)."""
        return self.answer_schema.component

    @property
    def primary(self) -> BoundMetric:
        return next(m for m in self.metrics if m.ref.primary)

    def resolve_view(self, view: str | None) -> str | None:
        return self.spec.resolve_view(view)

    def evolve(self, **fields: Any) -> Task:
        """This task with some spec fields replaced (given as in a task entry), bound anew."""
        data = {**self.spec.model_dump(mode="python"), **fields}
        return bind(TaskSpec.model_validate(data), self.sources)


def load_task(name: str, extra_folders: Iterable[Path] = ()) -> Task:
    """Compose, validate and bind the task entry ``name`` (e.g. ``"molp2s/gap"``)."""
    spec, sources, path = load_spec(name, extra_folders)
    return bind(spec, sources, entry=path)


def bind(spec: TaskSpec, sources: Sequence[Path] = (), *, entry: Path | None = None) -> Task:
    """Resolve every component of ``spec`` once; the first problem is one located error."""
    return _Binder(spec, list(sources), entry).task()


class _Binder:
    def __init__(self, spec: TaskSpec, sources: list[Path], entry: Path | None) -> None:
        self.spec = spec
        self.sources = sources
        self.fallback = entry or (sources[-1] if sources else None)
        self._found: dict[tuple[str, str], Any] = {}

    def task(self) -> Task:
        spec = self.spec
        family = self._get(registry.families, spec.family, ["family"])
        fields = {f.field: f for f in registry.FIELDS}
        bound: dict[str, Any] = {}
        for name in ("loader", "answer_schema", "parser", "predictions", "resolver", "counts"):
            ref = getattr(spec, name)
            bound[name] = self._bound(fields[name], ref) if ref is not None else None
        if bound["answer_schema"].params:
            raise BenchregError(
                f"answer_schema {spec.answer_schema.name!r} takes no params",
                where=self._where_key(["answer_schema", "params"]),
                fix="drop `params` under answer_schema",
            )
        bound["metrics"] = self._metrics(fields["metrics"])
        baseline = spec.baseline
        bound["baseline"] = self._bound(fields["baseline"], baseline) if baseline else None
        bound["analyses"] = tuple(
            self._bound(fields["analyses"], r, i) for i, r in enumerate(spec.analyses)
        )
        bound["validators"] = tuple(
            self._bound(fields["validators"], r, i) for i, r in enumerate(spec.validators)
        )
        if spec.prompt is not None:
            renderer = self._get(
                registry.prompt_renderers, spec.prompt.renderer, ["prompt", "renderer"]
            )
            bound["prompt"] = BoundPrompt(
                spec.prompt.renderer, renderer, dict(spec.prompt.templates)
            )
        return Task(spec=spec, family_info=family, sources=tuple(self.sources), **bound)

    def _get(
        self, reg: registry.Registry[Any], name: str, path: list[str | int]
    ) -> Any:
        key = (reg.kind, name)
        if key not in self._found:
            try:
                self._found[key] = reg.get(name)
            except UnknownComponentError as exc:
                where = (
                    locate_key(self.sources, [*path, "name"])
                    or locate_key(self.sources, path)
                    or locate_value(self.sources, name)
                    or self._where_key(path[:1])
                )
                raise BenchregError(f"{path[0]}: {exc.message}", where=where) from None
        return self._found[key]

    def _where_key(self, keys: list[str | int]) -> str | None:
        return locate_key(self.sources, keys) or (str(self.fallback) if self.fallback else None)

    def _bound(
        self, field: registry.ComponentField, ref: ComponentRef, index: int | None = None
    ) -> Bound[Any]:
        path: list[str | int] = [field.field] if index is None else [field.field, index]
        component = self._get(field.registry, ref.name, path)
        if ref.params or field.complete:

            def locate(key: str) -> str | None:
                return self._where_key([*path, "params", key])

            check_params(
                f"{field.field} {ref.name!r}",
                component,
                ref.params,
                field.n_args,
                locate=locate,
                complete=field.complete,
            )
        return Bound(ref.name, component, dict(ref.params), field.n_args)

    def _metrics(self, field: registry.ComponentField) -> tuple[BoundMetric, ...]:
        out: list[BoundMetric] = []
        seen: set[str] = set()
        for index, ref in enumerate(self.spec.metrics):
            factory = self._bound(field, ref, index).component
            try:
                metric = factory(**ref.params)
            except (TypeError, ValueError) as exc:  # a value the metric itself refuses
                raise BenchregError(
                    f"metrics: metric {ref.name!r}: {exc}",
                    where=self._where_key(["metrics", index, "params"]),
                    fix="see the metric's documentation for its params",
                ) from None
            if not isinstance(metric, Metric):
                raise TypeError(f"metric {ref.name!r} is not a benchreg.core.metric.Metric")
            names = metric.names
            if ref.label is not None:
                if len(names) != 1:
                    raise BenchregError(
                        f"metrics: metric {ref.name!r} reports {len(names)} values "
                        f"{list(names)}; `label` can rename only a single value",
                        where=locate_value(self.sources, ref.label) or self._where_key(["metrics"]),
                        fix="drop `label`",
                    )
                names = (ref.label,)
            clash = seen.intersection(names)
            if clash:
                raise BenchregError(
                    f"metrics: metric output name(s) {sorted(clash)} repeat in task "
                    f"{self.spec.name}",
                    where=self._where_key(["metrics"]),
                    fix="give one of the metrics a `label`",
                )
            seen.update(names)
            out.append(BoundMetric(ref, metric, names))
        return tuple(out)
