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
import time
from collections.abc import Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from loguru import logger

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
    task_counts,
)
from benchreg.core.system import Budget, System, SystemReport, check_answers, preflight
from benchreg.core.task import Task
from benchreg.core.types import Prediction, Request, Sample, Status, repeat_id

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
        result = await aexecute(prepared, system, options=options, journal=journal)
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
    tic = time.perf_counter()
    answers = await _answers(prepared, system, options, journal)
    seconds["predict"] = time.perf_counter() - tic
    tic = time.perf_counter()
    with gc_paused():
        predictions = [answers.by_id[s.id] for s in prepared.samples]
        if answers.resumed and answers.report.stats:
            answers.report.stats.update(attempts_total(predictions))
        scored = _scored(prepared, predictions, answers.by_id, options)
    seconds["score"] = time.perf_counter() - tic
    return _result(prepared, system, predictions, scored, answers.report, seconds, options)


@dataclass(slots=True)
class _Answers:
    by_id: dict[str, Prediction]  # by sample (and repeat) id
    report: SystemReport
    resumed: bool  # some answers came from the journal of an earlier attempt


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
    try:
        done = journal.load() if journal is not None else {}
        _answer_sinks(system, journal, budget, done)
        if done:
            logger.info(f"resuming: {len(done)} of {len(prepared.samples)} answers journaled")
        todo = [s for s in prepared.samples if s.id not in done]
        if _answers_directly(system, journal, budget, options):
            answered = system.answers_for(todo)  # type: ignore[attr-defined]
        else:
            with gc_paused():
                requests = _requests(prepared, system, todo, done, options.repeats)
            answered = await _predict_in_batches(system, requests, options, journal, budget)
        report = system.report()
        if budget is not None:
            report.stats["budget"] = budget.as_dict()
    finally:
        if journal is not None:
            journal.close()
        await system.aclose()
    return _Answers({**done, **{p.sample_id: p for p in answered}}, report, bool(done))


def _requests(
    prepared: PreparedRun,
    system: System,
    todo: list[Sample],
    done: Mapping[str, Any],
    repeats: int,
) -> list[Request]:
    """The requests of the samples not answered yet, then of their later repeats."""
    prompts = prepared.render_prompts(todo) if system.needs_prompts else [() for _ in todo]
    requests = [Request(sample=s, messages=m) for s, m in zip(todo, prompts, strict=True)]
    return requests + _repeat_requests(prepared, system, done, repeats)


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
    scores.values.update(probability_scores(samples, predictions, **boot))
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
    errors = statuses.get("error", 0)
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
        complete=errors == 0 or options.accept_errors,
        errors_accepted=errors > 0 and options.accept_errors,
    )


SUMMED_USAGE = ("prompt_tokens", "completion_tokens")


def attempts_total(predictions: list[Prediction]) -> dict[str, Any]:
    """A resumed run's counters over every attempt (the system itself saw only the last one),
    read from the answers' own records."""
    total: dict[str, Any] = {"samples": len(predictions)}
    for key in SUMMED_USAGE:
        total[key] = sum(int((p.metadata.get("usage") or {}).get(key, 0)) for p in predictions)
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


async def _predict_in_batches(
    system: System,
    requests: list[Request],
    options: RunOptions,
    journal: Journal | None = None,
    budget: Budget | None = None,
) -> list[Prediction]:
    """Hand requests over in batches, checking the contract and journaling every batch; under
    a budget, stop (BudgetReached) once it is spent and requests remain."""
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
            if budget is not None:
                for answer in answers:
                    budget.spend(answer)
                if start + size < len(requests):
                    budget.check()
    finally:
        progress.finish()
    return out


# --- run.repeats and budgets -----------------------------------------------------------------


def _answer_sinks(
    system: System, journal: Journal | None, budget: Budget | None, done: Mapping[str, Any]
) -> None:
    """The sinks an answer reaches as it arrives: the journal, and the budget's count (which
    starts with what earlier attempts of the run spent); the system checks the budget itself
    before each request it starts."""
    if budget is None:
        if journal is not None:
            system.on_answer = journal.append_one
        return
    for prediction in done.values():
        budget.spend(prediction)
    system.budget = budget

    def on_answer(prediction: Prediction) -> None:
        budget.spend(prediction)
        if journal is not None:
            journal.append_one(prediction)

    system.on_answer = on_answer


def _repeat_requests(
    prepared: PreparedRun, system: System, done: Mapping[str, Any], repeats: int
) -> list[Request]:
    """Repeats 1..k-1 of every sample not journaled yet, after all first repeats (so a budget
    that stops the run leaves whole repeats); each under its own id (``<id>@repeat<r>``)."""
    wanted = [
        (sample, r)
        for r in range(1, max(1, repeats))
        for sample in prepared.samples
        if repeat_id(sample.id, r) not in done
    ]
    if not wanted:
        return []
    unique = list({sample.id: sample for sample, _ in wanted}.values())
    rendered = prepared.render_prompts(unique) if system.needs_prompts else [() for _ in unique]
    prompts = {sample.id: m for sample, m in zip(unique, rendered, strict=True)}
    return [Request(_as_repeat(sample, r), prompts[sample.id], repeat=r) for sample, r in wanted]


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
