"""The task spec: a strict model of one registry entry (`tasks/<family>/<name>.yaml`).

Every component is referred to by a registered name, optionally with params; unknown keys are
rejected. Names are looked up, and params checked, when the spec is bound
(:func:`benchreg.core.task.bind`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchreg.core.errors import BenchregError


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
    """A metric of the task. A metric may report several values (e.g. precision, recall, F1);
    `primary: true` makes its primary value the task's primary metric. `label` renames the value
    of a single-value metric in the outputs."""

    primary: bool = False
    ci: Literal["auto", "wilson", "bootstrap", "none"] = "auto"
    label: str | None = None


class PromptSpec(_Strict):
    renderer: str
    templates: dict[str, str] = Field(default_factory=dict)  # role/part -> template file name


CLUSTER_ROOTS = ("id", "input", "gold", "meta")  # the Sample fields a cluster path starts at

GENERATION_KEYS = ("max_tokens", "stop", "temperature", "system")


class GenerationSpec(_Strict):
    """A task's own generation settings (`generation:` in its entry), for model systems: the
    answer length it needs (a report 512 tokens, an index 16), stop strings, a temperature and
    a system message. `model.*` overrides each; what was used is in the system's identity."""

    max_tokens: int | None = Field(None, ge=1)
    stop: list[str] | None = None
    temperature: float | None = Field(None, ge=0, allow_inf_nan=False)  # .inf: no sampling
    system: str | None = None  # a system message put before the prompt's own system text

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, value: Any) -> Any:
        # our own message (the entry's error names the file:line of `generation`), since the
        # generic unknown-key hint lists a component's keys
        if isinstance(value, dict):
            stray = sorted(str(k) for k in value if k not in GENERATION_KEYS)
            if stray:
                raise ValueError(
                    f"unknown key(s) {stray} under generation (allowed: "
                    f"{', '.join(GENERATION_KEYS)})"
                )
            if isinstance(value.get("stop"), str):
                value = {**value, "stop": [value["stop"]]}
        elif value is not None:
            raise ValueError(f"generation must be a mapping of {', '.join(GENERATION_KEYS)}")
        return value

    def given(self) -> dict[str, Any]:
        """The settings the entry gives (unset ones left out)."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class TaskSpec(_Strict):
    name: str
    family: str
    description: str
    loader: ComponentRef
    answer_schema: ComponentRef
    parser: ComponentRef | None = None
    predictions: ComponentRef | None = None  # reader for `model=predictions`
    resolver: ComponentRef | None = None  # gold resolution after prediction (ranked answers)
    metrics: list[MetricRef]
    counts: ComponentRef | None = None
    views: list[str] = Field(default_factory=list)
    default_view: str | None = None
    # views held back for final acceptance: read only in a run with `run.final=true`
    frozen_views: list[str] = Field(default_factory=list)
    prompt: PromptSpec | None = None
    data: list[str] = Field(default_factory=list)  # relative to the family's data root
    baseline: ComponentRef | None = None
    analyses: list[ComponentRef] = Field(default_factory=list)
    validators: list[ComponentRef] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)
    # generation settings for model systems (`model.*` overrides them)
    generation: GenerationSpec | None = None
    # samples sharing this field (a dotted path into the sample: `meta.release.parent_table_id`,
    # `gold.0.source_id`) share a source: every interval of the task resamples whole clusters
    cluster: str | None = None

    @field_validator("cluster")
    @classmethod
    def _cluster_path(cls, path: str | None) -> str | None:
        if path is None:
            return path
        parts = path.split(".")
        if parts[0] not in CLUSTER_ROOTS or not all(parts):
            raise ValueError(
                f"cluster {path!r} must be a dotted path starting with one of "
                f"{', '.join(CLUSTER_ROOTS)} (e.g. meta.release.parent_table_id)"
            )
        return path

    @field_validator("metrics")
    @classmethod
    def _one_primary(cls, metrics: list[MetricRef]) -> list[MetricRef]:
        if not metrics:
            raise ValueError("a task needs at least one metric")
        primaries = [m.name for m in metrics if m.primary]
        if len(primaries) != 1:
            raise ValueError(
                f"exactly one metric must be marked `primary: true` (found {len(primaries)})"
            )
        return metrics

    @model_validator(mode="after")
    def _views_consistent(self) -> TaskSpec:
        if self.default_view is not None and self.default_view not in self.views:
            raise ValueError(f"default_view {self.default_view!r} is not among views {self.views}")
        stray = [v for v in self.frozen_views if v not in self.views]
        if stray:
            raise ValueError(f"frozen_views {stray} are not among views {self.views}")
        if self.default_view is not None and self.default_view in self.frozen_views:
            raise ValueError(f"default_view {self.default_view!r} is frozen")
        return self

    @property
    def primary_metric(self) -> MetricRef:
        return next(m for m in self.metrics if m.primary)

    def resolve_view(self, view: str | None) -> str | None:
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
