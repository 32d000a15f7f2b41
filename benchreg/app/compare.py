"""`python -m benchreg compare <sweep A> [<sweep B>] [--a MODEL] [--b MODEL]`: is one system
better than another, by how much, and does the difference hold?

For every (task, view) that both sides ran, the per-sample scores of the primary metric are paired
on sample id; the mean difference (A - B) gets a paired percentile-bootstrap 95% CI and a test:
exact McNemar when every score is 0/1, else the Wilcoxon signed-rank test. The p-values are
Holm-corrected across the compared tasks. The comparison is refused (exit 2) when the two sides
read data files with different sha256: their scores are then not about the same samples.

With one sweep, A and B are two models of that sweep (`--a`/`--b` name them when it holds more
than two); with two sweeps, each side is the sweep's model (or the one `--a`/`--b` names). A model
is named by its shown name or its `model_id`; models are told apart by identity, so a name that
two models share (two files both called results.json) is refused as ambiguous. A run whose
metrics.json says `complete: false` is no result: it is not compared, and a note says so.

Both sweeps are checked (:func:`benchreg.core.analysis.check_sweep`) and the comparison is made
before anything is written: a folder that is no sweep, or a damaged file, is one located error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchreg.core.analysis import JobRecord, check_sweep
from benchreg.core.errors import BenchregError
from benchreg.core.io import atomic_write_text, dumps
from benchreg.core.reporting import Headline
from benchreg.core.summary import plural

ALPHA = 0.05


@dataclass
class TaskComparison:
    task: str
    view: str | None
    metric: str
    n_pairs: int
    only_a: int
    only_b: int
    mean_a: float | None = None
    mean_b: float | None = None
    ci95_a: tuple[float, float] | None = None  # of mean A over the pairs (Wilson for 0/1 scores)
    ci95_b: tuple[float, float] | None = None
    difference: float | None = None
    ci95: tuple[float, float] | None = None
    test: str = ""
    p: float | None = None
    p_holm: float | None = None
    significant: bool = False
    discordant: tuple[int, int] | None = None  # McNemar: (A right only, B right only)
    note: str = ""


@dataclass
class Comparison:
    a: str
    b: str
    rows: list[TaskComparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    alpha: float = ALPHA
    n_boot: int = 2000


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
        return _pick(side_a, a, "--a"), _pick(side_b, b, "--b")
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


def _by_key(jobs: list[JobRecord], side: str) -> dict[tuple[str, str | None], JobRecord]:
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


def _scores(job: JobRecord) -> dict[str, float | None]:
    return {str(row["id"]): row.get("score") for row in job.samples}


def compare_jobs(
    job_a: JobRecord, job_b: JobRecord, n_boot: int = 2000, seed: int = 0
) -> TaskComparison:
    from benchreg.core.stats import (
        bootstrap_mean_ci,
        mcnemar_exact,
        paired_bootstrap_ci,
        wilcoxon_signed_rank,
        wilson_ci,
    )

    scores_a, scores_b = _scores(job_a), _scores(job_b)
    common = [i for i in scores_a if i in scores_b]
    row = TaskComparison(
        task=job_a.task,
        view=job_a.view,
        metric=str(job_a.metrics.get("primary")),
        n_pairs=len(common),
        only_a=len(scores_a) - len(common),
        only_b=len(scores_b) - len(common),
    )
    pairs = [(scores_a[i], scores_b[i]) for i in common]
    if not pairs:
        row.note = "no sample id in common"
        return row
    if all(a is None and b is None for a, b in pairs):
        row.note = f"{row.metric} has no per-sample scores (not a mean of sample scores)"
        return row
    # a sample outside the metric's denominator (e.g. an unanswerable query for recall) has no
    # score on either side: it is not a pair
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    row.n_pairs = len(pairs)
    xa = [float(a) for a, _ in pairs]
    xb = [float(b) for _, b in pairs]
    diffs = [a - b for a, b in zip(xa, xb, strict=True)]
    row.mean_a, row.mean_b = sum(xa) / len(xa), sum(xb) / len(xb)
    row.difference = sum(diffs) / len(diffs)
    lo, hi = paired_bootstrap_ci(diffs, n_boot=n_boot, seed=seed)
    row.ci95 = (lo, hi)
    binary = all(v in (0.0, 1.0) for v in (*xa, *xb))
    for name, xs in (("ci95_a", xa), ("ci95_b", xb)):
        ci = (
            wilson_ci(int(sum(xs)), len(xs))
            if binary
            else bootstrap_mean_ci(xs, n_boot=n_boot, seed=seed)
        )
        setattr(row, name, (float(ci[0]), float(ci[1])))
    if binary:
        only_a = sum(1 for a, b in zip(xa, xb, strict=True) if a > b)
        only_b = sum(1 for a, b in zip(xa, xb, strict=True) if b > a)
        row.test, row.p, row.discordant = (
            "McNemar (exact)",
            mcnemar_exact(only_a, only_b),
            (only_a, only_b),
        )
    else:
        row.test, row.p = "Wilcoxon signed-rank", wilcoxon_signed_rank(diffs)
    return row


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def compare(
    sweep_a: Path,
    sweep_b: Path | None = None,
    a: str | None = None,
    b: str | None = None,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = ALPHA,
) -> Comparison:
    read_a = read_side(sweep_a)
    read_b = read_side(sweep_b) if sweep_b is not None else None
    side_a, side_b = pick_sides(read_a, read_b, a, b)
    keyed_a, keyed_b = _by_key(side_a, "A"), _by_key(side_b, "B")
    keys = sorted((k for k in keyed_a if k in keyed_b), key=lambda k: (k[0], k[1] or ""))
    label_a = f"{describe(side_a)} ({sweep_a})"
    label_b = f"{describe(side_b)} ({sweep_b or sweep_a})"
    if not keys:
        raise BenchregError(
            "the two sides have no task and view in common",
            where=f"{label_a} vs {label_b}",
            fix="compare sweeps that ran the same tasks and views",
        )
    for key in keys:
        check_same_data(keyed_a[key], keyed_b[key])
    result = Comparison(label_a, label_b, alpha=alpha, n_boot=n_boot)
    result.rows = [compare_jobs(keyed_a[k], keyed_b[k], n_boot, seed) for k in keys]
    tested = [r for r in result.rows if r.p is not None]
    for r, p in zip(tested, holm([r.p for r in tested if r.p is not None]), strict=True):
        r.p_holm = p
        r.significant = p < alpha
    sides = (("A", read_a, side_a), ("B", read_b or read_a, side_b))
    waiting: dict[str, list[JobRecord]] = {}
    for name, read, chosen in sides:
        groups = {j.group for j in chosen}
        waiting[name] = [j for j in read.incomplete if j.group in groups]
    for side, keyed, other, other_name in (
        ("A", keyed_a, keyed_b, "B"),
        ("B", keyed_b, keyed_a, "A"),
    ):
        unfinished = {(j.task, j.view) for j in waiting[other_name]}
        alone = [
            f"{t} [{v}]" if v else t
            for t, v in keyed
            if (t, v) not in other and (t, v) not in unfinished
        ]
        if alone:
            result.notes.append(f"only in {side} (not compared): {', '.join(alone)}")
    for name, jobs in waiting.items():
        if jobs:
            shown = ", ".join(f"{j.task} [{j.view}]" if j.view else j.task for j in jobs)
            result.notes.append(
                f"incomplete in {name} (failed requests not asked again; not compared): {shown}"
            )
    return result


def _f(x: float | None, digits: int = 4) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def _p(x: float | None) -> str:
    return "" if x is None else f"{x:.3g}"


def _mean(x: float | None, ci: tuple[float, float] | None) -> str:
    """`0.7500 [0.4000, 0.9000]`: a side's mean over the pairs with its 95% CI."""
    if x is None:
        return ""
    return f"{x:.4f} [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else f"{x:.4f}"


HEADER = [
    "task",
    "view",
    "metric",
    "pairs",
    "mean A [95% CI]",
    "mean B [95% CI]",
    "A - B",
    "95% CI",
    "test",
    "p",
    "p (Holm)",
    "significant",
    "note",
]


def table_rows(result: Comparison) -> list[list[str]]:
    rows = []
    for r in result.rows:
        ci = f"[{r.ci95[0]:+.4f}, {r.ci95[1]:+.4f}]" if r.ci95 else ""
        verdict = (
            "yes: A better"
            if r.significant and (r.difference or 0) > 0
            else "yes: B better"
            if r.significant
            else "no"
            if r.p is not None
            else ""
        )
        rows.append(
            [
                r.task,
                r.view or "",
                r.metric,
                str(r.n_pairs),
                _mean(r.mean_a, r.ci95_a),
                _mean(r.mean_b, r.ci95_b),
                "" if r.difference is None else f"{r.difference:+.4f}",
                ci,
                r.test,
                _p(r.p),
                _p(r.p_holm),
                verdict,
                r.note,
            ]
        )
    return rows


METHOD = (
    "Paired on sample id per task and view (pairs = n of each mean); mean A and mean B with "
    "their 95% CI (Wilson for 0/1 scores, else percentile bootstrap); difference = A - B of "
    "the primary metric's per-sample scores, paired bootstrap 95% CI ({n_boot} resamples); "
    "exact McNemar for 0/1 scores, else Wilcoxon signed-rank; Holm correction across the "
    "{tested} tested tasks at alpha = {alpha}."
)


def _tested(result: Comparison) -> list[TaskComparison]:
    return [r for r in result.rows if r.p is not None]


def summary_line(result: Comparison) -> str:
    tested = _tested(result)
    sig = sum(r.significant for r in tested)
    return f"{sig} of {len(tested)} tasks differ significantly after Holm correction."


def headline(result: Comparison) -> Headline:
    """The answer first: every task whose difference holds after the Holm correction (A better
    or B better), with both means, the difference and its CI, the test and the corrected p."""
    from benchreg.core.reporting import Cell

    nbsp = "\u00a0"  # keeps a CI on one line when a narrow terminal wraps the cell
    tested = _tested(result)
    rows: list[list[Any]] = []
    for r in (r for r in tested if r.significant):
        better = (r.difference or 0) > 0
        rows.append(
            [
                r.task,
                r.view or "",
                r.metric,
                r.n_pairs,
                _mean(r.mean_a, r.ci95_a).replace(", ", f",{nbsp}"),
                _mean(r.mean_b, r.ci95_b).replace(", ", f",{nbsp}"),
                f"{r.difference:+.4f} [{r.ci95[0]:+.4f},{nbsp}{r.ci95[1]:+.4f}]"
                if r.difference is not None and r.ci95
                else "",
                r.test,
                _p(r.p_holm),
                Cell("A better" if better else "B better", "pass" if better else "fail"),
            ]
        )
    sig = sum(r.significant for r in tested)
    title = f"Tasks that differ significantly after Holm correction: {sig} of {len(tested)}"
    footnotes = [
        f"A: {result.a}",
        f"B: {result.b}",
        METHOD.format(n_boot=result.n_boot, tested=len(tested), alpha=result.alpha),
    ]
    if not rows:
        footnotes.insert(0, "No task differs significantly: every tested task is listed below.")
    untested = len(result.rows) - len(tested)
    if untested:
        footnotes.append(
            f"{plural(untested, 'task')} not tested (no per-sample scores, or no sample in "
            "common): listed below with a note."
        )
    columns = [
        "task",
        "view",
        "metric",
        "pairs",
        "mean A [95% CI]",
        "mean B [95% CI]",
        "A - B [95% CI]",
        "test",
        "p (Holm)",
        "which",
    ]
    return Headline(title, columns, rows, footnotes)


def markdown(result: Comparison) -> str:
    from benchreg.app.report import headline as headline_view
    from benchreg.app.report.html import markdown_table

    tested = _tested(result)
    lines = [
        "# benchreg compare",
        "",
        f"- A: `{result.a}`",
        f"- B: `{result.b}`",
        "",
        f"**{summary_line(result)}**",
        "",
        headline_view.markdown(headline(result), level=2),
        "",
        "## Every task",
        "",
        METHOD.format(n_boot=result.n_boot, tested=len(tested), alpha=result.alpha),
        "",
        markdown_table(HEADER, table_rows(result)),
    ]
    lines += ["", *(f"- {n}" for n in result.notes)] if result.notes else []
    return "\n".join(lines) + "\n"


def render_comparison(result: Comparison) -> dict[str, str]:
    """File name -> text of every output of a comparison (compare.svg only with pygal):
    the page leads with the significant differences, then the figure, then every task."""
    from benchreg.app.report import INSTALL_HINT, html
    from benchreg.app.report import headline as headline_view

    files = {"compare.md": markdown(result), "compare.json": dumps(asdict(result))}
    parts = [
        f"<p class=small>A: <code>{html.esc(result.a)}</code><br>"
        f"B: <code>{html.esc(result.b)}</code></p>",
        f"<p class=states><strong>{html.esc(summary_line(result))}</strong></p>",
        headline_view.to_html(headline(result), "compare"),
    ]
    svg = None
    try:
        from benchreg.core.figures import paired_differences
    except ImportError:
        parts.append(
            f'<p class="note">pygal is not installed: no figure. Install it with '
            f"{html.esc(INSTALL_HINT)}</p>"
        )
    else:
        rows = [
            {
                "label": f"{r.task} [{r.view}]" if r.view else r.task,
                "difference": r.difference,
                "ci95": r.ci95,
                "significant": r.significant,
            }
            for r in result.rows
        ]
        svg = paired_differences(
            rows,
            "A - B per task (95% paired bootstrap CI; red: significant after Holm)",
            "difference of the primary metric (A - B; the value beside each point)",
        )
    if svg:
        files["compare.svg"] = svg
        parts += [
            "<h2>Figure</h2>",
            html.figure(svg, "Paired difference A - B per task", "compare"),
        ]
    method = METHOD.format(n_boot=result.n_boot, tested=len(_tested(result)), alpha=result.alpha)
    parts += [
        "<h2>Every task</h2>",
        f"<p class=small>{html.esc(method)}</p>",
        html.table(HEADER, table_rows(result), [r.significant for r in result.rows], cls="wide"),
    ]
    parts += [f"<p class=small>{html.esc(n)}</p>" for n in result.notes]
    files["compare.html"] = html.page("benchreg compare", parts)
    return files


def write_comparison(result: Comparison, out: Path) -> list[Path]:
    """Lay every output out in memory, then write them to ``out``."""
    files = render_comparison(result)
    if out.exists() and not out.is_dir():
        raise BenchregError(
            "a file where the comparison folder belongs", where=out, fix="pass --out DIR"
        )
    order = ["compare.md", "compare.json", "compare.html", "compare.svg"]
    written = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name in (n for n in order if n in files):
            atomic_write_text(out / name, files[name])
            written.append(out / name)
    except OSError as exc:
        raise BenchregError(
            f"cannot write the comparison ({exc.strerror or type(exc).__name__})",
            where=exc.filename or out,
            fix="pass --out DIR, a folder you can write",
        ) from None
    return written


def run(
    argv_a: Path,
    argv_b: Path | None,
    a: str | None,
    b: str | None,
    out: Path | None,
    n_boot: int,
    seed: int,
) -> int:
    """Both sweeps are checked and compared before anything is written."""
    from benchreg.app import logs
    from benchreg.app.report import headline as headline_view

    result = compare(argv_a, argv_b, a, b, n_boot=n_boot, seed=seed)
    target = out if out is not None else argv_a / "compare"
    written = write_comparison(result, target)
    if logs.verbose():
        print(markdown(result))
    else:
        print(headline_view.text(headline(result)))
        print()
        print(summary_line(result))
    for path in written:
        print(f"wrote {path}")
    return 0


def as_dict(result: Comparison) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(result)))
