"""The system contract: anything that answers requests (a predictions file, a baseline, a model).

A system is built by a factory registered in ``registry.systems`` as
``factory(cfg: Mapping, ctx: SystemContext) -> System``. The core then:

1. renders prompts only when ``system.needs_prompts`` is true;
2. awaits ``system.preflight()`` once, before the run folder is claimed (a system that talks to
   a server checks it is reachable, authorised and serves the model: bad input fails there, with
   nothing written), and sets ``system.on_answer`` to a sink that journals one answer (a system
   that answers requests one by one calls it as each arrives, so that a kill loses none); with a
   token or cost budget (`run.max_tokens_total`, `run.max_cost`) it sets ``system.budget`` (a
   :class:`Budget`), which a system that spends tokens checks before each request it starts;
3. awaits ``system.predict(requests)``; the answer must hold exactly one :class:`Prediction` per
   request, in the same order, for the same sample ids (a system with nothing to say for a
   sample returns ``Prediction.missing(id)``): anything else is a bug of the system and stops
   the run. A system that answers one request at a time (``answers_one_by_one = True``: a model
   server) gets every request of the run in one call: it keeps its own window of requests in
   flight from the first to the last (a new one starts when any finishes, never a batch waiting
   for its slowest answer) and calls ``on_answer`` with each answer as it arrives, in any order,
   which journals it, counts it against the budget and advances the progress bar. Any other
   system (a predictions file, a baseline, your own batched model) gets the requests
   ``run.batch_size`` at a time, each batch journaled and counted when it returns;
4. records ``system.report()`` in ``metrics.json`` (files read, ids it could not place, notes,
   counters such as requests made) and hashes its files into ``provenance.json``;
5. awaits ``system.aclose()`` once, whatever happened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from benchreg.core.errors import BenchregError
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




AnswerSink = Callable[[Prediction], None]


BUDGET_CAUSE = "budget reached"  # the detail's cause of a request a spent budget left unasked


class BudgetReached(BenchregError):
    """The run's token or cost budget is spent: the run stops (every answer so far journaled),
    and the same command with a larger budget goes on from there."""


@dataclass(slots=True)
class Budget:
    """Tokens (and, with prices, the cost) a run has spent, against its limits.

    Counted from each answer's ``metadata.usage`` as it reaches the core (answers journaled by
    an earlier attempt of the run count too: the budget is the run's, not the attempt's).
    Prices are per million tokens; the cost is ``prompt * prompt_price + completion *
    completion_price`` (the system's own currency)."""

    max_tokens_total: int | None = None
    max_cost: float | None = None
    price_prompt: float | None = None  # per 1M prompt tokens
    price_completion: float | None = None  # per 1M completion tokens
    prompt_tokens: int = 0
    completion_tokens: int = 0
    answers: int = 0
    _seen: set[int] = field(default_factory=set, repr=False)

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Budget | None:
        """None when the run has neither a limit nor prices (nothing to count against)."""
        budget = cls(
            max_tokens_total=options.get("max_tokens_total"),
            max_cost=options.get("max_cost"),
            price_prompt=options.get("price_prompt_per_1m"),
            price_completion=options.get("price_completion_per_1m"),
        )
        if budget.max_cost is not None and (
            budget.price_prompt is None and budget.price_completion is None
        ):
            raise BenchregError(
                "run.max_cost needs prices",
                fix="set run.price_prompt_per_1m and run.price_completion_per_1m (per million "
                "tokens), or drop run.max_cost",
            )
        limits = (budget.max_tokens_total, budget.max_cost, budget.price_prompt)
        if all(v is None for v in limits) and budget.price_completion is None:
            return None
        return budget

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> float | None:
        if self.price_prompt is None and self.price_completion is None:
            return None
        return (
            self.prompt_tokens * (self.price_prompt or 0.0)
            + self.completion_tokens * (self.price_completion or 0.0)
        ) / 1e6

    def spend(self, prediction: Prediction) -> None:
        """Count one answer's usage (once, however often it is handed over)."""
        if id(prediction) in self._seen:
            return
        self._seen.add(id(prediction))
        if prediction.metadata.get("cached"):
            return  # a cached answer costs nothing now
        usage = prediction.metadata.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens", 0) or 0)
        self.completion_tokens += int(usage.get("completion_tokens", 0) or 0)
        self.answers += 1

    def spent(self) -> str | None:
        """Why the budget is spent (None: it is not)."""
        if self.max_tokens_total is not None and self.tokens >= self.max_tokens_total:
            return f"{self.tokens:,} tokens of run.max_tokens_total={self.max_tokens_total:,}"
        cost = self.cost
        if self.max_cost is not None and cost is not None and cost >= self.max_cost:
            return f"a cost of {cost:.4f} of run.max_cost={self.max_cost:g}"
        return None

    def check(self) -> None:
        """Raise :class:`BudgetReached` once the budget is spent."""
        reason = self.spent()
        if reason is not None:
            raise BudgetReached(
                f"{BUDGET_CAUSE}: {reason} spent ({self.prompt_tokens:,} prompt + "
                f"{self.completion_tokens:,} completion tokens"
                + (f", cost {self.cost:.4f}" if self.cost is not None else "")
                + "); the run stopped with every answer so far journaled",
                fix="raise the budget and run the same command again to ask only the rest",
            )

    def as_dict(self) -> dict[str, Any]:
        return {
            "max_tokens_total": self.max_tokens_total,
            "max_cost": self.max_cost,
            "price_prompt_per_1m": self.price_prompt,
            "price_completion_per_1m": self.price_completion,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens": self.tokens,
            "cost": None if self.cost is None else round(self.cost, 6),
            "counted": "answers asked in this run and journaled by its earlier attempts "
            "(cached answers cost nothing)",
        }


class BaseSystem:
    """Defaults for the optional parts: no prompts, nothing to check first, an empty report,
    nothing to close."""

    name = "system"
    needs_prompts = False
    # answers read from the run's inputs or made from them alone (a predictions file, a
    # baseline, seeded random answers): not journaled, and previewed in samples.jsonl
    answers_from_inputs = False
    on_answer: AnswerSink | None = None  # set by the core: journal one answer as it arrives
    budget: Budget | None = None  # set by the core under a token/cost budget
    # takes all of a run's requests in one predict() call and calls on_answer for each answer
    # as it arrives (see the module docstring); False: handed run.batch_size requests at a time
    answers_one_by_one = False

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

    answers_from_inputs = True

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
        return self.answers_for([r.sample for r in requests])

    def answers_for(self, samples: Sequence[Sample]) -> list[Prediction]:
        """What :meth:`predict` answers for these samples' requests, without the requests: the
        run asks this way when nothing else sees a request (no journal, budget or repeats)."""
        by_id, missing = self.prediction_set.by_id, Prediction.missing
        return [by_id.get(s.id) or missing(s.id) for s in samples]

    def report(self) -> SystemReport:
        return SystemReport.of(self.prediction_set)


class Labelled:
    """A system shown under the user's `model.label`; its identity stays the system's own."""

    def __init__(self, system: System, label: str) -> None:
        self.system = system
        self.name = label
        self.needs_prompts = system.needs_prompts
        self.answers_from_inputs = getattr(system, "answers_from_inputs", False)
        self.answers_one_by_one = getattr(system, "answers_one_by_one", False)

    @property
    def identity(self) -> str:
        """The system's own, read when asked: a model server's holds what the server said it
        serves, known only after the preflight check."""
        return self.system.identity

    @property
    def on_answer(self) -> AnswerSink | None:
        return getattr(self.system, "on_answer", None)

    @on_answer.setter
    def on_answer(self, sink: AnswerSink | None) -> None:
        self.system.on_answer = sink  # type: ignore[union-attr]

    @property
    def budget(self) -> Budget | None:
        return getattr(self.system, "budget", None)

    @budget.setter
    def budget(self, budget: Budget | None) -> None:
        self.system.budget = budget  # type: ignore[union-attr]

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
