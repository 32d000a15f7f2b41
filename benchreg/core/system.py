"""The system contract: anything that answers requests (a predictions file, a baseline, a model).

A system is built by a factory registered in ``registry.systems`` as
``factory(cfg: Mapping, ctx: SystemContext) -> System``. The core then:

1. renders prompts only when ``system.needs_prompts`` is true;
2. awaits ``system.preflight()`` once, before the run folder is claimed (a system that talks to
   a server checks it is reachable, authorised and serves the model: bad input fails there, with
   nothing written), and sets ``system.on_answer`` to a sink that journals one answer (a system
   that answers requests one by one calls it as each arrives, so that a kill loses none);
3. awaits ``system.predict(batch)`` for each batch of requests; the answer must hold exactly one
   :class:`Prediction` per request, in the same order, for the same sample ids (a system with
   nothing to say for a sample returns ``Prediction.missing(id)``): anything else is a bug of
   the system and stops the run;
4. records ``system.report()`` in ``metrics.json`` (files read, ids it could not place, notes,
   counters such as requests made) and hashes its files into ``provenance.json``;
5. awaits ``system.aclose()`` once, whatever happened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from benchreg.core.types import Prediction, PredictionSet, Request, Sample

if TYPE_CHECKING:
    from benchreg.core.task import Task


@dataclass(frozen=True, slots=True)
class SystemContext:
    """What a system factory may know about the run it serves: the bound task (its prediction
    reader, baseline, answer schema and loader params, each resolved once), the view, the data
    root, the samples and the run options."""

    task: Task
    view: str | None
    data_root: Path
    samples: Sequence[Sample]
    options: Mapping[str, Any] = field(default_factory=dict)  # the run options (cache, ...)


@dataclass(slots=True)
class SystemReport:
    """What a system wants recorded about its run, beside the scores."""

    files: list[Path] = field(default_factory=list)  # inputs it read (hashed into provenance)
    unknown_ids: list[str] = field(default_factory=list)  # answers for ids not in the data set
    notes: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)  # e.g. requests, cache hits, tokens

    @classmethod
    def of(cls, prediction_set: PredictionSet) -> SystemReport:
        return cls(
            files=list(prediction_set.files),
            unknown_ids=list(prediction_set.unknown_ids),
            notes=list(prediction_set.notes),
        )


@runtime_checkable
class System(Protocol):
    name: str  # shown in tables and folder names (`model.label` replaces it)
    identity: str  # what the answers depend on; tells two models apart (never the label)
    needs_prompts: bool

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]: ...

    def report(self) -> SystemReport: ...

    async def aclose(self) -> None: ...


SystemFactory = Callable[[Mapping[str, Any], SystemContext], System]


AnswerSink = Callable[[Prediction], None]


class BaseSystem:
    """Defaults for the optional parts: no prompts, nothing to check first, an empty report,
    nothing to close."""

    name = "system"
    needs_prompts = False
    on_answer: AnswerSink | None = None  # set by the core: journal one answer as it arrives

    @property
    def identity(self) -> str:
        return self.name

    async def preflight(self) -> None:
        """Check what can fail before any answer is asked for (endpoint, credentials, model)."""
        return None

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        raise NotImplementedError

    def report(self) -> SystemReport:
        return SystemReport()

    async def aclose(self) -> None:
        return None


class PerSampleSystem(BaseSystem):
    """Wraps a function ``sample -> answer | Prediction`` as a (trivially async) system."""

    def __init__(
        self, name: str, answer: Callable[[Sample], Any], identity: str | None = None
    ) -> None:
        self.name = name
        self._answer = answer
        self._identity = identity or name

    @property
    def identity(self) -> str:
        return self._identity

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        out = []
        for request in requests:
            result = self._answer(request.sample)
            if not isinstance(result, Prediction):
                result = Prediction(sample_id=request.sample.id, answer=result)
            out.append(result)
        return out


class PredictionSetSystem(BaseSystem):
    """Answers looked up in a :class:`PredictionSet` (what a prediction reader returned)."""

    def __init__(self, name: str, prediction_set: PredictionSet) -> None:
        self.name = name
        self.prediction_set = prediction_set

    @property
    def identity(self) -> str:
        """The predictions' content, not the file name: same-named files of two models differ."""
        from benchreg.core.io import sha256_file

        digests = ",".join(sha256_file(p) for p in self.prediction_set.files)
        return f"predictions:sha256={digests}"

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        by_id = self.prediction_set.by_id
        return [by_id.get(r.sample.id) or Prediction.missing(r.sample.id) for r in requests]

    def report(self) -> SystemReport:
        return SystemReport.of(self.prediction_set)


class Labelled:
    """A system shown under the user's `model.label`; its identity stays the system's own."""

    def __init__(self, system: System, label: str) -> None:
        self.system = system
        self.name = label
        self.identity = system.identity
        self.needs_prompts = system.needs_prompts

    @property
    def on_answer(self) -> AnswerSink | None:
        return getattr(self.system, "on_answer", None)

    @on_answer.setter
    def on_answer(self, sink: AnswerSink | None) -> None:
        self.system.on_answer = sink  # type: ignore[union-attr]

    async def preflight(self) -> None:
        await preflight(self.system)

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        return await self.system.predict(requests)

    def report(self) -> SystemReport:
        return self.system.report()

    async def aclose(self) -> None:
        await self.system.aclose()


async def preflight(system: System) -> None:
    """The system's own check before a run (systems written before the hook have none)."""
    check = getattr(system, "preflight", None)
    if check is not None:
        await check()


def check_answers(system: System, requests: Sequence[Request], answers: Any) -> list[Prediction]:
    """Enforce the contract: one Prediction per request, in order, for the same sample."""
    if not isinstance(answers, list) or len(answers) != len(requests):
        got = len(answers) if isinstance(answers, list) else type(answers).__name__
        raise SystemContractError(
            f"system {system.name!r} returned {got} predictions for {len(requests)} requests"
        )
    for request, answer in zip(requests, answers, strict=True):
        if not isinstance(answer, Prediction) or answer.sample_id != request.sample.id:
            found = answer.sample_id if isinstance(answer, Prediction) else type(answer).__name__
            raise SystemContractError(
                f"system {system.name!r} answered {found!r} where {request.sample.id!r} was asked"
            )
    return answers


class SystemContractError(RuntimeError):
    """A system broke the contract (a bug in the system, not bad user input)."""
