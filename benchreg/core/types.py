"""The data that flows through a run: samples in, predictions out, scores and counts.

Statuses have one meaning each, in every family:

- ``ok``: the answer passed the task's answer schema and is scored as given;
- ``missing``: the system gave nothing for the sample (e.g. absent from a predictions file);
- ``invalid``: the system gave something that is not an answer: unparseable text, a wrong type,
  an entry flagged invalid by its submitter, or conflicting duplicate entries;
- ``out_of_range``: a well-typed answer outside the sample's answer space (index 7 of 4 options);
- ``error``: the system failed on the sample (a server error, a timeout, an exception).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Protocol


class Status(StrEnum):
    """What became of one sample's prediction (see the module docstring)."""

    OK = "ok"
    MISSING = "missing"
    INVALID = "invalid"
    OUT_OF_RANGE = "out_of_range"
    ERROR = "error"


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
    # What the task's resolver made of the answer against the sample's gold (e.g. which gold
    # regions each ranked result hits); None for tasks without a resolver.
    resolved: Any = None
    # Why the answer was only read by a fallback (e.g. free text instead of the requested JSON);
    # None when it was read as asked. The answer is scored as given either way.
    degraded: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @classmethod
    def missing(cls, sample_id: str, detail: str = "no prediction") -> Prediction:
        return cls(sample_id, status=Status.MISSING, detail=detail)


@dataclass(frozen=True, slots=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class Request:
    """What a system is asked for one sample: the sample itself and its rendered prompt.

    ``repeat`` (0, 1, ... under `run.repeats=k`) tells the k askings of one sample apart: a
    system that samples keys its cache by it and varies its seed; ``sample.id`` of a repeat
    after the first carries the repeat (:func:`repeat_id`)."""

    sample: Sample
    messages: tuple[Message, ...] = ()
    repeat: int = 0


REPEAT_MARK = "@repeat"


def repeat_id(sample_id: str, repeat: int) -> str:
    """The id under which repeat ``repeat`` of a sample is asked and journaled (repeat 0: the
    sample's own id)."""
    return sample_id if repeat == 0 else f"{sample_id}{REPEAT_MARK}{repeat}"


@dataclass(slots=True)
class Dataset:
    """What a loader returns."""

    samples: list[Sample]
    files: list[Path]  # every data file read (hashed into provenance.json)
    warnings: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    # checks the loader already ran while building the samples, by name, for the validators
    # that report them (a family's own format; not written anywhere as such)
    checked: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class PredictionSet:
    """What a prediction reader returns: answers keyed by sample id plus what did not fit."""

    by_id: dict[str, Prediction]
    files: list[Path]
    unknown_ids: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Checked:
    """An answer after schema validation (``degraded``: read only by a fallback, and why)."""

    answer: Any
    status: Status = Status.OK
    detail: str | None = None
    degraded: str | None = None


@dataclass(frozen=True, slots=True)
class Degraded:
    """What a parser returns when it could read an answer only by a fallback: the answer is
    used as usual and the prediction is flagged ``degraded`` with ``reason``."""

    answer: Any
    reason: str


# --- component protocols ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LoadContext:
    data_root: Path
    data: tuple[Path, ...]  # the task's `data` paths, resolved against data_root
    view: str | None
    params: Mapping[str, Any]
    task_name: str
    parser: Parser | None = None  # the task's parser, for gold given as answer text
    # which parser that is (registered name and params, as JSON): part of the key of what a
    # loader or validator caches from gold it read with the parser
    parser_ref: str | None = None
    cache: bool = True  # the loaded-data cache may answer (`run.data_cache`, core.load)


class Loader(Protocol):
    def __call__(self, ctx: LoadContext) -> Dataset: ...


class AnswerSchema(Protocol):
    """Validates one answer against one sample. Optional parts (looked up with ``getattr``):

    - ``random(sample, rng)``: a random valid answer (`model=random`);
    - ``json_schema(sample) -> dict | None``: the answer stated as a JSON Schema (per sample
      where its bounds depend on the sample, None where it cannot be stated), which
      `model.structured=json_schema` sends as the request's ``response_format``. It describes
      the JSON the model writes: the reply the task's parser reads (``json_is_answer`` false,
      the default), or, with ``json_is_answer = True``, the answer itself (checked by ``check``
      directly, as a predictions file's answer is; the text parser is not asked);
    - ``choices(sample) -> Choices | None``: for a choice question, every answer and how a
      reply writes it (`model.scoring=logprobs` reads the model's probability of each).
    """

    def check(self, answer: Any, sample: Sample) -> Checked: ...


@dataclass(frozen=True, slots=True)
class Choices:
    """The answers of a choice question as a reply writes them: ``prefix`` + ``texts[i]`` +
    ``suffix`` states ``answers[i]`` (e.g. ``{"selected_candidate_index":`` + `` 2`` + ``}``).
    ``prefix`` ends where the choice is written (without a trailing space: a reply may put
    white space before the choice)."""

    answers: tuple[Any, ...]
    texts: tuple[str, ...]
    prefix: str = ""
    suffix: str = ""


class Parser(Protocol):
    """Model text -> answer; raises :class:`benchreg.core.errors.ParseError` when it cannot."""

    def __call__(self, text: str, sample: Sample, /) -> Any: ...


class Resolver(Protocol):
    """Built per run as ``factory(dataset, **params)``; called after parsing and validation for
    every ok (or out-of-range) prediction; its return value is stored in ``prediction.resolved``."""

    def __call__(self, sample: Sample, prediction: Prediction, /) -> Any: ...


class CountsFn(Protocol):
    """A family's own counts, written beside the shared status counts (never replacing them)."""

    def __call__(
        self, samples: Sequence[Sample], predictions: Sequence[Prediction], **params: Any
    ) -> dict[str, int]: ...


class PredictionReader(Protocol):
    def __call__(
        self, path: Path, samples: Sequence[Sample], task_name: str, **params: Any
    ) -> PredictionSet: ...


class PromptRenderer(Protocol):
    def __call__(
        self, sample: Sample, templates: Mapping[str, str], view: str | None
    ) -> tuple[Message, ...]: ...


class ResolverFactory(Protocol):
    """Builds the run's :class:`Resolver` from the loaded data set and the entry's params."""

    def __call__(self, dataset: Dataset, /, **params: Any) -> Resolver: ...


class ValidatorFn(Protocol):
    """Data-set checks (`mode=validate`, and warnings on every load)."""

    def __call__(self, dataset: Dataset, ctx: LoadContext, /, **params: Any) -> list[Any]: ...


class MetricFactory(Protocol):
    """A metric class (or factory) called with the entry's params; returns a
    :class:`benchreg.core.metric.Metric`."""

    def __call__(self, **params: Any) -> Any: ...


class SystemFactory(Protocol):
    """Builds a run's system from its config (``model.*``) and its
    :class:`benchreg.core.system.SystemContext`; returns a :class:`benchreg.core.system.System`."""

    def __call__(self, cfg: Mapping[str, Any], ctx: Any, /) -> Any: ...


class BaselineFactory(Protocol):
    """Called with the run's :class:`benchreg.core.system.SystemContext` and the params;
    returns ``sample -> answer | Prediction``."""

    def __call__(self, ctx: Any, /, **params: Any) -> Any: ...


class AnalysisFn(Protocol):
    """A cross-run analysis over a sweep's jobs (:class:`benchreg.core.analysis.JobRecord`);
    returns an :class:`benchreg.core.analysis.AnalysisReport`."""

    def __call__(self, jobs: Any, /, **params: Any) -> Any: ...
