"""The one orchestrator: run a bound task end to end, without Hydra.

:func:`aevaluate` loads and checks the data (:func:`benchreg.core.pipeline.prepare`), builds the
system, claims the run folder when one is given (resume, reuse or refuse), asks the system for
what the journal does not hold yet, parses, validates, resolves and scores the answers, and
writes the run's files. The CLI, sweeps and the library all call it: :func:`arun_task` (async,
usable in a notebook with ``await``) and :func:`run_task` (synchronous, also from code that
already runs an event loop) are its library face.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar, overload

from loguru import logger

from benchreg.core.floors import floor_record
from benchreg.core.io import read_json
from benchreg.core.journal import Journal
from benchreg.core.load import gc_paused
from benchreg.core.options import DEFAULT_OPTIONS, RunOptions
from benchreg.core.outputs import write_run
from benchreg.core.pipeline import PreparedRun, build_system, prepare
from benchreg.core.progress import Progress
from benchreg.core.result import RunResult
from benchreg.core.runfolder import METRICS_FILE, open_run_folder, run_fingerprint
from benchreg.core.scoring import (
    parse_and_check,
    probability_scores,
    repeat_scores,
    resolve,
    score,
    status_counts,
    strict_view,
    task_clusters,
    task_counts,
)
from benchreg.core.system import (
    BUDGET_CAUSE,
    Budget,
    BudgetReached,
    System,
    SystemContext,
    SystemReport,
    check_answers,
    preflight,
)
from benchreg.core.task import Task
from benchreg.core.types import Message, Prediction, Request, Sample, Status, repeat_id

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RunOutput:
    """Where a run goes: its folder (claimed, journaled, written) and the resolved config that
    `provenance.json` records (redacted there). ``reuse_finished``: a folder holding this very
    run, finished, is kept as it is (a sweep re-run) instead of being refused."""

    folder: Path
    config: Mapping[str, Any] = field(default_factory=dict)
    reuse_finished: bool = False


@dataclass(slots=True)
class Evaluation:
    """What :func:`aevaluate` did: the result (None when a finished run was kept as it is) and,
    with a run folder, the `metrics.json` record written or found there."""

    result: RunResult | None
    record: dict[str, Any] | None = None
    folder: Path | None = None
    reused: bool = False


async def aevaluate(
    task: Task,
    *,
    view: str | None,
    system_cfg: Mapping[str, Any],
    roots: Mapping[str, Any],
    options: RunOptions = DEFAULT_OPTIONS,
    output: RunOutput | None = None,
) -> Evaluation:
    """Run ``task`` on the system ``system_cfg`` names; with ``output``, into its folder."""
    prepared = prepare(task, view=view, roots=roots, options=options)
    system = build_system(prepared, system_cfg, options)
    if output is None:
        await _checked(system)
        return Evaluation(await aexecute(prepared, system, options=options))
    try:
        fingerprint = run_fingerprint(
            task.spec.model_dump(mode="json"),
            prepared.view,
            dict(system_cfg),
            prepared.dataset.files,
            options.result_options(),
        )
        info = {"task": task.name, "view": prepared.view, "model": system_cfg.get("name")}
        folder = open_run_folder(
            output.folder,
            fingerprint,
            info,
            overwrite=options.overwrite,
            reuse_finished=output.reuse_finished,
        )
    except BaseException:
        await system.aclose()
        raise
    try:
        if folder.finished:  # kept as it is: the system is never asked, nor checked
            await system.aclose()
            record = read_json(output.folder / METRICS_FILE)
            return Evaluation(None, record, output.folder, reused=True)
        try:
            await _checked(system)
        except BaseException:
            folder.unclaim()  # a new folder goes back to empty: nothing written
            raise
        journal = Journal(output.folder) if journaled(system) else None
        try:
            result = await aexecute(prepared, system, options=options, journal=journal)
        except BaseException:
            folder.abandon()  # no answer kept: the corrected command finds the folder free
            raise
        result.answers_from_inputs = journal is None
        record = write_run(output.folder, result, output.config)
        return Evaluation(result, record, output.folder)
    finally:
        folder.release()


def journaled(system: System) -> bool:
    """Whether the run journals the system's answers as they arrive: not when they are read
    from the run's inputs or made from them alone (``answers_from_inputs``: a resumed run makes
    them again, the same answers)."""
    return not getattr(system, "answers_from_inputs", False)


async def _checked(system: System) -> None:
    """The system's preflight check; the system is closed when it fails."""
    try:
        await preflight(system)
    except BaseException:
        await system.aclose()
        raise


def evaluate(
    task: Task,
    *,
    view: str | None,
    system_cfg: Mapping[str, Any],
    roots: Mapping[str, Any],
    options: RunOptions = DEFAULT_OPTIONS,
    output: RunOutput | None = None,
) -> Evaluation:
    """Synchronous :func:`aevaluate`."""
    return run_sync(
        aevaluate(
            task, view=view, system_cfg=system_cfg, roots=roots, options=options, output=output
        )
    )


async def arun_task(
    task: Task,
    *,
    view: str | None = None,
    system_cfg: Mapping[str, Any] | None = None,
    roots: Mapping[str, Any] | None = None,
    options: RunOptions = DEFAULT_OPTIONS,
) -> RunResult:
    """Load the task's data, ask the system (default: the task's baseline), score the answers."""
    evaluation = await aevaluate(
        task,
        view=view,
        system_cfg=system_cfg or {"name": "baseline"},
        roots=roots or {},
        options=options,
    )
    assert evaluation.result is not None  # without a run folder nothing is reused
    return evaluation.result


def run_task(
    task: Task,
    *,
    view: str | None = None,
    system_cfg: Mapping[str, Any] | None = None,
    roots: Mapping[str, Any] | None = None,
    options: RunOptions = DEFAULT_OPTIONS,
) -> RunResult:
    """Synchronous :func:`arun_task`; inside a running event loop it runs in a worker thread."""
    return run_sync(arun_task(task, view=view, system_cfg=system_cfg, roots=roots, options=options))


async def aexecute(
    prepared: PreparedRun,
    system: System,
    *,
    options: RunOptions = DEFAULT_OPTIONS,
    journal: Journal | None = None,
) -> RunResult:
    """Ask the system for what the journal does not hold yet, then parse and score; the system
    is closed at the end, whatever happens."""
    seconds = dict(prepared.seconds)
    tic, cpu = time.perf_counter(), time.process_time()
    with _fewer_collections():
        answers = await _answers(prepared, system, options, journal)
    seconds["predict"] = time.perf_counter() - tic
    seconds["predict_cpu"] = time.process_time() - cpu  # the client's cost, beside the wait
    tic = time.perf_counter()
    with gc_paused():
        predictions = [answers.by_id[s.id] for s in prepared.samples]
        if answers.resumed and answers.report.stats:
            answers.report.stats.update(attempts_total(predictions))
        scored = _scored(prepared, predictions, answers.by_id, options)
    seconds["score"] = time.perf_counter() - tic
    result = _result(prepared, system, predictions, scored, answers.report, seconds, options)
    result.stopped = answers.stopped
    _mark_failed(result, answers.by_id, options)
    tic = time.perf_counter()
    ctx = SystemContext(
        prepared.task, prepared.view, prepared.data_root, prepared.samples, options=asdict(options)
    )
    result.floor = floor_record(ctx, prepared.dataset, n_boot=options.n_boot, seed=options.seed)
    if result.floor:  # a family without floors keeps the keys it always had
        seconds["floor"] = time.perf_counter() - tic
    return result


YOUNG_COLLECTION_EVERY = 20_000  # allocations (Python's default: 700)


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """While the system answers, the cyclic garbage collector's young generation is collected
    every ``YOUNG_COLLECTION_EVERY`` allocations instead of 700: at 256 requests in flight a
    collection came every few answers, walked every request in flight, promoted them and ran
    the older generations over them (70 ms of a 1 s answering phase, 7% of its throughput).
    Cycles (asyncio's and aiohttp's, about one object per request) are still collected."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], YOUNG_COLLECTION_EVERY), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@dataclass(slots=True)
class _Answers:
    by_id: dict[str, Prediction]  # by sample (and repeat) id
    report: SystemReport
    resumed: bool  # some answers came from the journal of an earlier attempt
    stopped: str | None = None  # why the budget stopped the run (its unasked requests failed)


@dataclass(slots=True)
class _Scored:
    values: dict[str, Any]
    primary: str
    per_sample: dict[str, Any]
    strict: dict[str, Any] | None


async def _answers(
    prepared: PreparedRun, system: System, options: RunOptions, journal: Journal | None
) -> _Answers:
    """Every answer: those the journal holds and the system's for the rest, with the system's
    report. The journal and the system are closed at the end, whatever happens."""
    budget = Budget.from_options(asdict(options))
    progress: Progress | None = None
    stopped: str | None = None
    try:
        done = journal.load() if journal is not None else {}
        if done:
            logger.info(f"resuming: {len(done)} of {len(prepared.samples)} answers journaled")
        todo = [s for s in prepared.samples if s.id not in done]
        if _answers_directly(system, journal, budget, options):
            answered = system.answers_for(todo)  # type: ignore[attr-defined]
        else:
            requests = _requests(prepared, system, todo, done, options.repeats)
            label = f"{system.name}: answering"
            progress = Progress(label, len(requests), enabled=options.progress)
            _answer_sinks(system, journal, budget, done, progress)
            try:
                answered = await _predict(system, requests, options, journal, budget, progress)
            except BudgetReached as reached:
                if journal is None:  # no run folder to mark incomplete: the stop is the answer
                    raise
                logger.warning(reached.what)
                stopped = reached.what
                answered = _after_budget(prepared, journal, done, options.repeats, stopped)
        report = system.report()
        if budget is not None:
            report.stats["budget"] = budget.as_dict()
    finally:
        if progress is not None:
            progress.finish()
        if journal is not None:
            journal.close()
        await system.aclose()
    by_id = {**done, **{p.sample_id: p for p in answered}}
    return _Answers(by_id, report, bool(done), stopped)


def _after_budget(
    prepared: PreparedRun,
    journal: Journal,
    done: Mapping[str, Prediction],
    repeats: int,
    stopped: str,
) -> list[Prediction]:
    """The answers of a run its budget stopped: what the journal holds (this attempt's answers
    reached it as they arrived), and every request not answered as a failed one (`budget
    reached`), so the run is written and marked incomplete, and the same command with a larger
    budget asks exactly those."""
    journal.close()
    kept = {**journal.load(errors=True), **done}  # this attempt's failures keep their cause
    ids = (repeat_id(s.id, r) for r in range(max(1, repeats)) for s in prepared.samples)
    unasked = [
        Prediction(i, status=Status.ERROR, detail=f"{BUDGET_CAUSE}: not asked ({stopped})")
        for i in ids
        if i not in kept
    ]
    return [*kept.values(), *unasked]


def _requests(
    prepared: PreparedRun,
    system: System,
    todo: list[Sample],
    done: Mapping[str, Any],
    repeats: int,
) -> LazyRequests:
    """The requests of the samples not answered yet, then of their later repeats (after all
    first repeats, so a budget that stops the run leaves whole repeats), each repeat under its
    own id (``<id>@repeat<r>``); prompts rendered as the requests are read."""
    wanted = [(sample, 0) for sample in todo]
    wanted += [
        (sample, r)
        for r in range(1, max(1, repeats))
        for sample in prepared.samples
        if repeat_id(sample.id, r) not in done
    ]
    return LazyRequests(prepared, wanted, system.needs_prompts)


class LazyRequests(Sequence[Request]):
    """A run's requests, each chunk's prompts rendered when a request of it is first read: a
    model server gets its first requests at once and the rest are rendered while it answers
    (rendering 2,000 MolP2S prompts up front held every request back by 50 ms)."""

    CHUNK = 64

    def __init__(
        self, prepared: PreparedRun, wanted: list[tuple[Sample, int]], needs_prompts: bool
    ) -> None:
        self._prepared = prepared
        self._wanted = wanted  # (sample, repeat)
        self._needs_prompts = needs_prompts
        self._made: list[Request | None] = [None] * len(wanted)
        self._prompts: dict[str, tuple[Message, ...]] = {}  # by sample id: repeats share it

    def __len__(self) -> int:
        return len(self._wanted)

    @overload
    def __getitem__(self, index: int) -> Request: ...

    @overload
    def __getitem__(self, index: slice) -> list[Request]: ...

    def __getitem__(self, index: int | slice) -> Request | list[Request]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        index %= len(self)
        made = self._made[index]
        if made is None:
            self._make(index - index % self.CHUNK)
            made = self._made[index]
            assert made is not None
        return made

    def _make(self, start: int) -> None:
        chunk = range(start, min(start + self.CHUNK, len(self)))
        new = list({s.id: s for s, _ in (self._wanted[i] for i in chunk)}.values())
        new = [s for s in new if s.id not in self._prompts]
        render = self._prepared.render_prompts if self._needs_prompts else _without_prompts
        rendered = render(new)
        self._prompts.update((s.id, m) for s, m in zip(new, rendered, strict=True))
        for i in chunk:
            sample, r = self._wanted[i]
            asked = _as_repeat(sample, r) if r else sample
            self._made[i] = Request(asked, self._prompts[sample.id], repeat=r)


def _scored(
    prepared: PreparedRun,
    predictions: list[Prediction],
    by_id: Mapping[str, Prediction],
    options: RunOptions,
) -> _Scored:
    """Parse, check, resolve and score the answers: the metrics of the first repeat, those over
    every repeat (``run.repeats``), the option probabilities' scores (``model.scoring=logprobs``)
    and the strict view of every metric when answers were degraded."""
    task, samples = prepared.task, prepared.samples
    boot = {"n_boot": options.n_boot, "seed": options.seed}
    parse_and_check(task, samples, predictions)
    resolve(task, prepared.dataset, samples, predictions)
    scores = score(task, samples, predictions, progress=options.progress, **boot)
    if options.repeats > 1:
        runs = _repeat_runs(task, prepared, samples, by_id, options.repeats)
        extra, each = repeat_scores(task, samples, [predictions, *runs], **boot)
        scores.values.update(extra)
        _record_repeats(predictions, runs, each, scores.primary)
    clusters = task_clusters(task, samples)
    scores.values.update(probability_scores(samples, predictions, clusters=clusters, **boot))
    strict_preds = strict_view(predictions)
    strict = None
    if strict_preds is not None:
        strict = score(task, samples, strict_preds, progress=False, **boot).values
    return _Scored(scores.values, scores.primary, scores.per_sample, strict)


def _result(
    prepared: PreparedRun,
    system: System,
    predictions: list[Prediction],
    scored: _Scored,
    report: Any,
    seconds: dict[str, float],
    options: RunOptions,
) -> RunResult:
    degraded = sum(1 for p in predictions if p.degraded)
    if degraded:
        logger.warning(
            f"{degraded} of {len(predictions)} answers were read only by a fallback "
            "(`degraded` in samples.jsonl says why); they are scored as given"
        )
    statuses = status_counts(predictions)
    return RunResult(
        task=prepared.task,
        view=prepared.view,
        system_name=system.name,
        system_identity=system.identity,
        data_root=prepared.data_root,
        dataset=prepared.dataset,
        samples=prepared.samples,
        predictions=predictions,
        metrics=scored.values,
        primary=scored.primary,
        per_sample=scored.per_sample,
        statuses=statuses,
        counts=task_counts(prepared.task, prepared.samples, predictions),
        system_report=report,
        findings=prepared.findings,
        seconds=seconds,
        strict=scored.strict,
    )


def _mark_failed(result: RunResult, by_id: Mapping[str, Prediction], options: RunOptions) -> None:
    """Count the failed requests of every repeat, not only repeat 0's: a later repeat that
    failed would otherwise enter mean@k, pass@k and the majority as a wrong answer in a run
    marked complete. Only ``run.accept_errors=true`` lets such a run be a result."""
    ids = [repeat_id(s.id, r) for r in range(max(1, options.repeats)) for s in result.samples]
    result.failed = [by_id[i] for i in ids if by_id[i].status is Status.ERROR]
    result.requests = len(ids)
    # requests a budget left unasked are no server's failure: never accepted as wrong answers
    accepted = options.accept_errors and result.stopped is None
    result.complete = not result.failed or accepted
    result.errors_accepted = bool(result.failed) and accepted


SUMMED_USAGE = ("prompt_tokens", "completion_tokens")


def attempts_total(predictions: list[Prediction]) -> dict[str, Any]:
    """A resumed run's counters over every attempt (the system itself saw only the last one),
    read from the answers' own records."""
    total: dict[str, Any] = {"samples": len(predictions)}
    usages = [p.metadata.get("usage") or {} for p in predictions]
    counted = [u for u in usages if not u.get("estimated")]  # the server's own counts only
    for key in SUMMED_USAGE:
        total[key] = sum(int(usage.get(key, 0)) for usage in counted)
    total["usage_estimated"] = len(usages) - len(counted)
    total["errors"] = sum(1 for p in predictions if p.status is Status.ERROR)
    return {**total, "counted_over": "all attempts (a resumed run)"}


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


def _answers_directly(
    system: System, journal: Journal | None, budget: Budget | None, options: RunOptions
) -> bool:
    """Whether the system's answers are looked up by sample id (``answers_for``, a predictions
    file's) with no request built: nothing else sees the requests (no journal, budget, prompts
    or repeats), so building a request per sample would be work for nobody."""
    return (
        callable(getattr(system, "answers_for", None))
        and not system.needs_prompts
        and journal is None
        and budget is None
        and options.repeats <= 1
    )


async def _predict(
    system: System,
    requests: Sequence[Request],
    options: RunOptions,
    journal: Journal | None,
    budget: Budget | None,
    progress: Progress,
) -> list[Prediction]:
    """Every request to a system that answers one by one in one call (its answers reach the
    journal, the budget and the progress bar through ``on_answer`` as they arrive, and it checks
    the budget before each request it starts); to any other, batch after batch."""
    if not getattr(system, "answers_one_by_one", False):
        return await _predict_in_batches(system, requests, options, journal, budget, progress)
    answers = check_answers(system, requests, await system.predict(requests))
    if journal is not None:
        journal.append(answers)  # what the system did not hand on (journaled lines are skipped)
    if budget is not None:
        for answer in answers:
            budget.spend(answer)  # counted once, however often handed over
    return answers


async def _predict_in_batches(
    system: System,
    requests: Sequence[Request],
    options: RunOptions,
    journal: Journal | None,
    budget: Budget | None,
    progress: Progress,
) -> list[Prediction]:
    """Hand requests over ``run.batch_size`` at a time, checking the contract and journaling
    every batch; under a budget, stop (BudgetReached) once it is spent and requests remain."""
    out: list[Prediction] = []
    size = max(1, options.batch_size)
    for start in range(0, len(requests), size):
        batch = requests[start : start + size]
        answers = check_answers(system, batch, await system.predict(batch))
        if journal is not None:
            journal.append(answers)
        out.extend(answers)
        progress.advance(len(batch))
        if budget is not None:
            for answer in answers:
                budget.spend(answer)
            if start + size < len(requests):
                budget.check()
    return out


# --- run.repeats and budgets -----------------------------------------------------------------


def _answer_sinks(
    system: System,
    journal: Journal | None,
    budget: Budget | None,
    done: Mapping[str, Any],
    progress: Progress,
) -> None:
    """The sinks an answer reaches as it arrives: the budget's count (which starts with what
    earlier attempts of the run spent), the journal and, for a system that answers one by one,
    the progress bar; the system checks the budget itself before each request it starts."""
    sinks: list[Callable[[Prediction], None]] = []
    if budget is not None:
        for prediction in done.values():
            budget.spend(prediction)
        system.budget = budget
        sinks.append(budget.spend)
    if journal is not None:
        sinks.append(journal.append_one)
    if getattr(system, "answers_one_by_one", False):
        sinks.append(lambda _: progress.advance())
    if len(sinks) > 1:

        def on_answer(prediction: Prediction) -> None:
            for sink in sinks:
                sink(prediction)

        system.on_answer = on_answer
    elif sinks:
        system.on_answer = sinks[0]


def _without_prompts(samples: Sequence[Sample]) -> list[tuple[Message, ...]]:
    return [() for _ in samples]


def _as_repeat(sample: Sample, r: int) -> Sample:
    return Sample(repeat_id(sample.id, r), sample.input, sample.gold, sample.meta)


def _repeat_runs(
    task: Task,
    prepared: PreparedRun,
    samples: list[Sample],
    by_id: Mapping[str, Prediction],
    repeats: int,
) -> list[list[Prediction]]:
    """Repeats 1..k-1 in sample order, parsed, checked and resolved like the first."""
    runs = []
    for r in range(1, repeats):
        run = [by_id[repeat_id(s.id, r)] for s in samples]
        parse_and_check(task, samples, run)
        resolve(task, prepared.dataset, samples, run)
        runs.append(run)
    return runs


def _record_repeats(
    predictions: list[Prediction], runs: list[list[Prediction]], each: list[Any], primary: str
) -> None:
    """Each sample's later repeats in its row of samples.jsonl (`metadata.repeats`)."""
    for i, prediction in enumerate(predictions):
        rows = []
        for r, run in enumerate(runs, start=1):
            pred, scored = run[i], each[r].per_sample.get(primary)
            rows.append(
                {
                    "repeat": r,
                    "raw_output": pred.raw_text,
                    "answer": pred.answer,
                    "status": pred.status.value,
                    "score": None if scored is None else float(scored[i]),
                    "detail": pred.detail,
                }
            )
        prediction.metadata["repeats"] = rows
