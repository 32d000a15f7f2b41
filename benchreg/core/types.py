"""The data that flows through a run: samples in, predictions out, scores and counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Protocol


class Status(StrEnum):
    """What became of one sample's prediction."""

    OK = "ok"
    MISSING = "missing"  # the system gave nothing for this sample
    INVALID = "invalid"  # unparseable text, wrong type, or flagged invalid by the submitter
    OUT_OF_RANGE = "out_of_range"  # well-typed, but outside the sample's answer space
    ERROR = "error"  # the system failed on this sample (e.g. a server error)


@dataclass(frozen=True, slots=True)
class Sample:
    """One evaluation item.

    ``input`` is what a system may see (family-specific), ``gold`` the reference answer in the
    family's answer schema (an index, a structured list, a string, a dict, a ranked list, ...).
    """

    id: str
    input: Mapping[str, Any]
    gold: Any
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Prediction:
    """One system answer, before or after parsing and validation."""

    sample_id: str
    answer: Any = None
    status: Status = Status.OK
    raw_text: str | None = None
    detail: str | None = None  # why the status is not ok
    latency_s: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK


@dataclass(frozen=True, slots=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class Request:
    """What a system is asked for one sample: the sample itself and its rendered prompt."""

    sample: Sample
    messages: tuple[Message, ...] = ()


@dataclass(slots=True)
class Dataset:
    """What a loader returns."""

    samples: list[Sample]
    files: list[Path]  # every data file read (hashed into provenance.json)
    warnings: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class PredictionSet:
    """What a prediction reader returns: answers keyed by sample id plus what did not fit."""

    by_id: dict[str, Prediction]
    files: list[Path]
    unknown_ids: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class MetricResult:
    """One metric over one run.

    ``per_sample`` (aligned with the samples) lets the core bootstrap a CI and write per-sample
    scores; corpus-level metrics (micro-F1, ...) leave it ``None`` and are bootstrapped by
    recomputation on resampled indices.
    """

    value: float
    n: int
    denominator: int
    per_sample: list[float] | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Checked:
    """An answer after schema validation."""

    answer: Any
    status: Status = Status.OK
    detail: str | None = None


# --- component protocols ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LoadContext:
    data_root: Path
    data: tuple[Path, ...]  # the task's `data` paths, resolved against data_root
    view: str | None
    params: Mapping[str, Any]
    task_name: str


class Loader(Protocol):
    def __call__(self, ctx: LoadContext) -> Dataset: ...


class AnswerSchema(Protocol):
    """Validates one answer against one sample; may also draw a random valid answer."""

    def check(self, answer: Any, sample: Sample) -> Checked: ...


class Parser(Protocol):
    """Model text -> answer; raises :class:`benchreg.core.errors.ParseError` when it cannot."""

    def __call__(self, text: str, sample: Sample) -> Any: ...


class MetricFn(Protocol):
    def __call__(
        self, samples: Sequence[Sample], predictions: Sequence[Prediction], **params: Any
    ) -> MetricResult: ...


class CounterFn(Protocol):
    def __call__(
        self,
        samples: Sequence[Sample],
        predictions: Sequence[Prediction],
        prediction_set: PredictionSet | None,
    ) -> dict[str, int]: ...


class PredictionReader(Protocol):
    def __call__(self, path: Path, samples: Sequence[Sample], task_name: str) -> PredictionSet: ...


class PromptRenderer(Protocol):
    def __call__(
        self, sample: Sample, templates: Mapping[str, str], view: str | None
    ) -> tuple[Message, ...]: ...


class System(Protocol):
    """Anything that answers: a predictions file, an offline baseline, a model server.

    Batches of requests in, one prediction per request out (same order). Async so that model
    servers can be called concurrently; offline systems simply return.
    """

    name: str
    needs_prompts: bool

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]: ...


JSONValue = Any
JSONMapping = Mapping[str, JSONValue]
