"""The task spec: a strict model of one registry entry (`tasks/<family>/<name>.yaml`).

Every component is referred to by a registered name, optionally with params; unknown keys are
rejected. Names are checked against the registries by :func:`check_components`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchreg.core import registry


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ComponentRef(_Strict):
    """A registered component name plus keyword params for it."""

    name: str
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value


class MetricRef(ComponentRef):
    primary: bool = False
    ci: Literal["auto", "wilson", "bootstrap", "none"] = "auto"
    label: str | None = None  # name in the outputs; defaults to `name`

    @property
    def output_name(self) -> str:
        return self.label or self.name


class PromptSpec(_Strict):
    renderer: str
    templates: dict[str, str] = Field(default_factory=dict)  # role/part -> template file name


class TaskSpec(_Strict):
    name: str
    family: str
    description: str
    loader: ComponentRef
    answer_schema: ComponentRef
    parser: ComponentRef | None = None
    predictions: ComponentRef | None = None  # reader for `model=predictions`
    metrics: list[MetricRef]
    counts: ComponentRef | None = None
    views: list[str] = Field(default_factory=list)
    default_view: str | None = None
    prompt: PromptSpec | None = None
    data: list[str] = Field(default_factory=list)  # relative to the family's data root
    baseline: ComponentRef | None = None
    analyses: list[ComponentRef] = Field(default_factory=list)
    validators: list[ComponentRef] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)

    @field_validator("metrics")
    @classmethod
    def _one_primary(cls, metrics: list[MetricRef]) -> list[MetricRef]:
        if not metrics:
            raise ValueError("a task needs at least one metric")
        primaries = [m.output_name for m in metrics if m.primary]
        if len(primaries) != 1:
            raise ValueError(
                f"exactly one metric must be marked `primary: true` (found {len(primaries)})"
            )
        names = [m.output_name for m in metrics]
        if len(set(names)) != len(names):
            raise ValueError(f"metric names repeat: {names}; give one a `label`")
        return metrics

    @model_validator(mode="after")
    def _views_consistent(self) -> TaskSpec:
        if self.default_view is not None and self.default_view not in self.views:
            raise ValueError(f"default_view {self.default_view!r} is not among views {self.views}")
        return self

    @property
    def primary(self) -> MetricRef:
        return next(m for m in self.metrics if m.primary)

    def resolve_view(self, view: str | None) -> str | None:
        from benchreg.core.errors import BenchregError

        if view is None:
            return self.default_view
        if not self.views:
            raise BenchregError(
                f"task {self.name} has no views, but view={view!r} was given",
                fix="drop the `view=` override",
            )
        if view not in self.views:
            raise BenchregError(
                f"task {self.name} has no view {view!r}", fix=f"choose one of {self.views}"
            )
        return view


def check_components(spec: TaskSpec) -> list[tuple[str, str]]:
    """Look every named component up; returns ``(field, problem)`` pairs (empty when all known)."""
    problems: list[tuple[str, str]] = []

    def look(field: str, reg: registry.Registry[Any], name: str) -> None:
        try:
            reg.get(name)
        except Exception as exc:  # UnknownComponentError carries the message we want
            problems.append((field, getattr(exc, "message", str(exc))))

    look("family", registry.families, spec.family)
    look("loader", registry.loaders, spec.loader.name)
    look("answer_schema", registry.answer_schemas, spec.answer_schema.name)
    if spec.parser:
        look("parser", registry.parsers, spec.parser.name)
    if spec.predictions:
        look("predictions", registry.prediction_readers, spec.predictions.name)
    for metric in spec.metrics:
        look("metrics", registry.metrics, metric.name)
    if spec.counts:
        look("counts", registry.counters, spec.counts.name)
    if spec.prompt:
        look("prompt", registry.prompt_renderers, spec.prompt.renderer)
    if spec.baseline:
        look("baseline", registry.baselines, spec.baseline.name)
    for analysis in spec.analyses:
        look("analyses", registry.analyses, analysis.name)
    for validator in spec.validators:
        look("validators", registry.validators, validator.name)
    return problems
