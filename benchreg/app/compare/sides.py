"""The two sides of a comparison: which finished jobs of which sweep are A and B, keyed by task
and view, and the check that both read the same data."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchreg.core.analysis import JobRecord, check_sweep
from benchreg.core.errors import BenchregError
from benchreg.core.summary import plural


def model_id(job: JobRecord) -> str:
    return job.model_id


def _names(job: JobRecord) -> set[str]:
    """What names a job's model on the command line: its identity, display name or label."""
    return {n for n in (job.model_id, job.model, job.label) if n}


def _models(jobs: list[JobRecord]) -> dict[str, list[JobRecord]]:
    """Model group (identity; a user-labelled set of predictions files is one model) -> jobs."""
    out: dict[str, list[JobRecord]] = {}
    for job in sorted(jobs, key=lambda j: j.group):
        out.setdefault(job.group, []).append(job)
    return out


def describe(jobs: list[JobRecord]) -> str:
    """A model as a name to type: its identity (identities), with the display name beside it
    when that differs (two files both called results.json are two identities)."""
    ids = sorted({j.model_id for j in jobs})
    shown = jobs[0].label or jobs[0].model
    joined = ", ".join(ids)
    return joined if ids == [shown] else f"{joined} ({shown})"


def _choices(models: dict[str, list[JobRecord]]) -> str:
    return "; ".join(describe(jobs) for jobs in models.values())


@dataclass
class Side:
    """The finished jobs of one sweep: complete ones (results) and incomplete ones (not used)."""

    where: Path
    jobs: list[JobRecord]
    incomplete: list[JobRecord]


def read_side(sweep: Path) -> Side:
    """A sweep's jobs, every file checked (a folder that is no sweep, or a damaged file, is one
    located error before anything is written)."""
    jobs = check_sweep(sweep)
    return Side(sweep, [j for j in jobs if j.complete], [j for j in jobs if not j.complete])


def _pick(side: Side, wanted: str | None, flag: str) -> list[JobRecord]:
    models = _models(side.jobs)
    if wanted is None:
        if len(models) != 1:
            raise BenchregError(
                f"the sweep holds {len(models)} models ({_choices(models) or 'no finished job'})",
                where=side.where,
                fix=f"name the one to compare with {flag} MODEL",
            )
        return side.jobs
    matching = {g: js for g, js in models.items() if any(wanted in _names(j) for j in js)}
    if not matching:
        waiting = [j for j in side.incomplete if wanted in _names(j)]
        more = (
            f" ({plural(len(waiting), 'incomplete job')}: run the sweep again to finish them)"
            if waiting
            else ""
        )
        raise BenchregError(
            f"no finished job of model {wanted!r}{more}",
            where=side.where,
            fix=f"choose one of: {_choices(models) or '(none)'}",
        )
    if len(matching) > 1:
        raise BenchregError(
            f"{wanted!r} names {len(matching)} different models ({_choices(matching)})",
            where=side.where,
            fix=f"name one by its model_id: {flag} MODEL_ID",
        )
    return next(iter(matching.values()))


def pick_sides(
    side_a: Side, side_b: Side | None, a: str | None, b: str | None
) -> tuple[list[JobRecord], list[JobRecord]]:
    if side_b is not None:
        jobs_a, jobs_b = _pick(side_a, a, "--a"), _pick(side_b, b, "--b")
        if {j.dir.resolve() for j in jobs_a} == {j.dir.resolve() for j in jobs_b}:
            raise BenchregError(
                f"A and B are the same runs ({describe(jobs_a)})",
                where=side_b.where,
                fix="pass the sweep of another model (or two models of one sweep: --a, --b)",
            )
        return jobs_a, jobs_b
    models = _models(side_a.jobs)
    if a is None and b is None:
        if len(models) != 2:
            raise BenchregError(
                f"one sweep compares two of its models; it holds {len(models)} "
                f"({_choices(models) or 'no finished job'})",
                where=side_a.where,
                fix="name them with --a MODEL --b MODEL, or pass a second sweep",
            )
        first, second = models.values()
        return first, second
    if a is None or b is None:
        raise BenchregError(
            "name both models, --a and --b",
            where=side_a.where,
            fix="one sweep compares two of its models: --a MODEL --b MODEL",
        )
    jobs_a, jobs_b = _pick(side_a, a, "--a"), _pick(side_a, b, "--b")
    if jobs_a[0].group == jobs_b[0].group:
        raise BenchregError(
            f"--a {a!r} and --b {b!r} name the same model ({describe(jobs_a)})",
            where=side_a.where,
            fix="name two different models",
        )
    return jobs_a, jobs_b


def select_sides(
    sweep_a: Path, sweep_b: Path | None, a: str | None, b: str | None
) -> tuple[list[JobRecord], list[JobRecord]]:
    side_a = read_side(sweep_a)
    side_b = read_side(sweep_b) if sweep_b is not None else None
    return pick_sides(side_a, side_b, a, b)


def by_key(jobs: list[JobRecord], side: str) -> dict[tuple[str, str | None], JobRecord]:
    out: dict[tuple[str, str | None], JobRecord] = {}
    for job in jobs:
        key = (job.task, job.view)
        if key in out:
            view = f" view {job.view}" if job.view else ""
            raise BenchregError(
                f"side {side} has two jobs of model {describe([job])} for task {job.task}{view}: "
                f"{out[key].dir} and {job.dir}",
                where=job.dir.parent,
                fix="compare sweeps that ran the model once per task and view (e.g. runs on two "
                "data roots: compare them from separate sweeps)",
            )
        out[key] = job
    return out


def check_same_data(job_a: JobRecord, job_b: JobRecord) -> None:
    data_a = (job_a.metrics.get("sha256") or {}).get("data") or {}
    data_b = (job_b.metrics.get("sha256") or {}).get("data") or {}
    if data_a != data_b:
        differ = sorted(k for k in {*data_a, *data_b} if data_a.get(k) != data_b.get(k))
        raise BenchregError(
            f"refusing to compare {job_a.task} view={job_a.view}: the two runs read different "
            f"data (sha256 differs for {', '.join(differ[:3])}"
            f"{', ...' if len(differ) > 3 else ''})",
            where=f"{job_a.dir} vs {job_b.dir}",
            fix="compare runs of the same data files (same roots.<family> and data version)",
        )
