"""`python -m benchreg report <sweep_dir>`: a sweep's results as a self-contained HTML page, SVG
figures and markdown, written to `<sweep_dir>/report/` (also at the end of every sweep).

- first, each family's headline: its answer in one table, from the family's registered report
  part (``benchreg.core.reporting``; each family's ``report.py``), rendered here as markdown and
  HTML (and as text on the terminal by ``benchreg.app.callbacks``);
- the sample browser, `samples.html` (``benchreg.app.report.samples``), linked from the page;
- per task and model: the primary metric with its 95% CI (one figure per family);
- per family: the figures of the family's registered report part (``benchreg.core.reporting``;
  each family's ``report.py``), e.g. accuracy by view with verdicts, or metrics against gates;
- every metric each run recorded, with its 95% CI and n/denominator in the one meaning of
  :data:`benchreg.core.summary.ND_NOTE` with the statuses that make the difference beside it
  (and the strict view where a run has one), and the models with their identities;
- a counts table (missing, invalid, out of range, error, degraded; failed, unfinished and
  incomplete jobs) in which a broken run is highlighted.

Models are told apart by identity (`model_id`; a user-labelled set of predictions files is one
model, as in the analyses), never by the display name alone: two models that share a name are
shown with a short identity beside it. A run whose metrics.json says `complete: false` (failed
requests not asked again yet) is listed as incomplete, its values marked so and left out of the
figures. The sweep is checked before anything is written
(:func:`benchreg.core.analysis.check_sweep`): a folder that is no sweep, or a damaged file, is one
located error and no report.

Figures need pygal (the `reports` extra); without it the page and the markdown are still
written, with a note saying how to install it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchreg.app.report import headline as headline_view
from benchreg.app.report import html
from benchreg.app.report.samples import SAMPLES_PAGE, sweep_jobs, write_browser
from benchreg.app.sweepfolder import job_states
from benchreg.core.analysis import (
    JobRecord,
    check_error,
    check_sweep,
    identity_labels,
    read_checked,
)
from benchreg.core.errors import BenchregError
from benchreg.core.io import atomic_write_text
from benchreg.core.not_a_result import NOT_A_RESULT, not_a_result_reason
from benchreg.core.reporting import Headline, ReportInput
from benchreg.core.runfolder import ERROR_FILE, refuse_inside_run_folder
from benchreg.core.summary import ND_NOTE, Support, plural, support

REMADE = False  # the report is made again from the job folders (`benchreg report`): no fsync
REPORT_DIR = "report"
INSTALL_HINT = "pip install 'benchreg[reports]'  (pygal)"
COUNT_KEYS = ("missing", "invalid", "out_of_range", "error")
RESULT_STATES = ("ok", "incomplete")  # states of a job with a metrics.json
NOT_OK_STATES = ("incomplete", "failed", "unfinished", "not started")
INCOMPLETE = "incomplete"
# a sweep with more samples than this gets no sample browser with its report (a note says how to
# write one: `python -m benchreg view <sweep>`)
MAX_BROWSER_SAMPLES = 200_000
RESUME = (
    "run the same command again to ask only the failed samples again, or accept the errors as "
    "wrong answers with run.accept_errors=true"
)


@dataclass
class ReportResult:
    out_dir: Path
    html: Path
    markdown: Path
    figures: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    headlines: list[tuple[str, Headline]] = field(default_factory=list)  # (family, headline)
    samples: Path | None = None  # the sample browser, when written


@dataclass
class Job:
    name: str
    state: str  # ok | incomplete | failed | unfinished | not started
    record: dict[str, Any] | None = None  # metrics.json (of a failed job: what error.json says)
    error: str | None = None
    identity: str = ""  # the model group (core.analysis.JobRecord.group): tells models apart
    model_ids: tuple[str, ...] = ()  # the identities (`model_id`) behind the group
    shown: str = ""  # the model's label in this report: the name, a short identity when shared
    found: JobRecord | None = None  # the checked job folder (samples), for a job with results

    @property
    def family(self) -> str:
        if self.record:
            return str(self.record.get("family") or self.task.split("/")[0])
        return self.task.split("/")[0] if self.task else ""

    @property
    def task(self) -> str:
        return str((self.record or {}).get("task") or "")

    @property
    def label(self) -> str:
        view = (self.record or {}).get("view")
        return f"{self.task} [{view}]" if view else self.task

    @property
    def name_shown(self) -> str:
        """The display name as the run recorded it (`model` in metrics.json)."""
        return str((self.record or {}).get("model") or "")

    @property
    def model(self) -> str:
        """The model as this report shows it (:func:`benchreg.core.analysis.identity_labels`)."""
        return self.shown or self.name_shown

    def primary(self) -> dict[str, Any]:
        record = self.record or {}
        metric = (record.get("metrics") or {}).get(record.get("primary"), {})
        return {"name": record.get("primary"), **metric}


def incomplete_text(record: Mapping[str, Any]) -> str:
    """Why a run with `complete: false` is no result, and how to finish it."""
    info = record.get("incomplete")
    info = info if isinstance(info, Mapping) else {}
    statuses = record.get("statuses") or {}
    errors = info.get("errors", statuses.get("error"))
    total = info.get("of", record.get("n"))
    causes = info.get("by_cause")
    causes = causes if isinstance(causes, Mapping) else {}
    failed = f"{errors} of {total} requests failed" if errors is not None else "requests failed"
    if causes:
        failed += " (" + ", ".join(f"{cause}: {n}" for cause, n in causes.items()) + ")"
    resume = info.get("resume") if isinstance(info.get("resume"), str) else RESUME
    return f"{failed}; its numbers are not a result: {resume}"


def read_sweep(sweep_dir: Path) -> list[Job]:
    """Every job of the sweep with its state; every file read is checked first
    (:func:`benchreg.core.analysis.check_sweep`: a damaged one is one located error)."""
    finished = {job.dir.name: job for job in check_sweep(sweep_dir)}
    jobs = []
    for state in job_states(sweep_dir):
        job = Job(state.name, state.state)
        found = finished.get(state.folder.name) if state.folder is not None else None
        if state.state in RESULT_STATES and found is not None:
            job.record, job.found = found.metrics, found
            job.identity, job.model_ids = found.group, (found.model_id,)
            job.state = "ok" if found.complete else INCOMPLETE  # what its metrics.json says
            if not found.complete:
                job.error = incomplete_text(found.metrics)
        elif state.state in RESULT_STATES:  # its files went away while the report was read
            job.state = "unfinished"
        elif state.folder is not None and state.state == "failed":
            error = read_checked(state.folder / ERROR_FILE, check_error)
            job.error = str(error.get("error"))
            job.record = {k: error.get(k) for k in ("task", "view", "model")}
            if error.get("model_id"):
                job.identity, job.model_ids = str(error["model_id"]), (str(error["model_id"]),)
        jobs.append(job)
    _label_models(jobs)
    return jobs


def _label_models(jobs: list[Job]) -> None:
    """Each job's model label: its display name, with a short identity when another model
    (another identity) shares the name; jobs of one model group share its identities."""
    named = [j for j in jobs if j.name_shown and j.identity]
    labels = identity_labels((j.name_shown, j.identity) for j in named)
    ids: dict[str, list[str]] = {}
    for job in named:
        for model_id in job.model_ids:
            if model_id not in ids.setdefault(job.identity, []):
                ids[job.identity].append(model_id)
    for job in named:
        job.shown = labels[(job.name_shown, job.identity)]
        job.model_ids = tuple(ids[job.identity])


def write_report(sweep_dir: Path, out_dir: Path | None = None) -> ReportResult:
    """Check the sweep, lay the report out in memory, then write it: a sweep that is not one or
    has a damaged file is a :class:`BenchregError` and nothing is written."""
    sweep_dir = Path(sweep_dir)
    jobs = read_sweep(sweep_dir)
    out = Path(out_dir) if out_dir is not None else sweep_dir / REPORT_DIR
    refuse_inside_run_folder(out, fix="pass --out DIR outside the run folder")
    if out.exists() and not out.is_dir():
        raise BenchregError(
            "a file where the report folder belongs", where=out, fix="pass --out DIR (a folder)"
        )
    fig_dir = out / "figures"
    result = ReportResult(out, out / "index.html", out / "report.md")
    result.headlines = collect_headlines(sweep_dir, jobs, result.notes)
    figures = _figures(sweep_dir, jobs, result.notes)
    title = f"benchreg sweep report: {sweep_dir.name}"
    total = sum(j.found is not None and int((j.record or {}).get("n") or 0) for j in jobs)
    browse = total <= MAX_BROWSER_SAMPLES
    if not browse:
        result.notes.append(
            f"{total} samples: no sample browser with the report (write one with "
            f"python -m benchreg view {sweep_dir})"
        )
    layout = Layout(title, sweep_dir, jobs, figures, result.notes, result.headlines, browse)
    markdown = _markdown(layout)
    page = _html(layout)
    try:
        fig_dir.mkdir(parents=True, exist_ok=True)
        for name, (svg, _) in figures.items():
            path = fig_dir / f"{name}.svg"
            atomic_write_text(path, svg, durable=REMADE)
            result.figures.append(path)
        if browse:
            result.samples = write_sweep_browser(
                sweep_dir, jobs, out / SAMPLES_PAGE, back="index.html"
            )
        atomic_write_text(result.markdown, markdown, durable=REMADE)
        atomic_write_text(result.html, page, durable=REMADE)
    except OSError as exc:
        raise BenchregError(
            f"cannot write the report ({exc.strerror or type(exc).__name__})",
            where=exc.filename or out,
            fix="pass --out DIR, a folder you can write",
        ) from None
    return result


def write_sweep_browser(
    sweep_dir: Path, jobs: list[Job], path: Path, back: str | None = None
) -> Path:
    """The sample browser of every job of the sweep (`samples.html`); ``back``: a relative
    link to the report."""
    records = {j.name: j.found for j in jobs if j.found is not None}
    title = f"benchreg samples: {sweep_dir.name}"
    return write_browser(path, sweep_jobs(jobs, records), title, back)


def report_inputs(sweep_dir: Path, jobs: list[Job]) -> dict[str, ReportInput]:
    """Family -> what its report part reads: its finished jobs' metrics.json records (with
    `model` as this report shows it, so two models of one display name stay apart, and `job`,
    the job's folder name) and the sweep's analysis files. Only results: an incomplete run is
    left out."""
    ok = [j for j in jobs if j.state == "ok" and j.record]
    return {
        family: ReportInput(
            family,
            sweep_dir,
            [{**j.record, "model": j.model, "job": j.name} for j in ok if j.family == family],
        )
        for family in sorted({j.family for j in ok})
    }


def collect_headlines(
    sweep_dir: Path, jobs: list[Job], notes: list[str]
) -> list[tuple[str, Headline]]:
    """(family, headline) of every family of the sweep whose report part has one; a part that
    raises is skipped with a note."""
    from benchreg.core import registry

    out = []
    for family, data in report_inputs(sweep_dir, jobs).items():
        registry.load_family(family)  # its report part, without importing every family
        if family not in registry.report_parts:
            continue
        part = registry.report_parts.get(family)
        if part.headline is None:
            continue
        try:
            made = part.headline(data)
        except Exception as exc:  # an analysis of another shape must not stop the report
            notes.append(f"{family} headline skipped: {type(exc).__name__}: {exc}")
            continue
        if made is not None:
            out.append((family, made))
    return out


def sweep_headlines(sweep_dir: Path) -> tuple[list[tuple[str, Headline]], list[str]]:
    """The headlines of a sweep on disk (and notes on parts skipped), for the terminal."""
    notes: list[str] = []
    return collect_headlines(Path(sweep_dir), read_sweep(Path(sweep_dir)), notes), notes


def _figures(sweep_dir: Path, jobs: list[Job], notes: list[str]) -> dict[str, tuple[str, str]]:
    """name -> (svg, caption): each family's report part, then the primary metric per family;
    empty with a note when pygal is missing. Only results are drawn: an incomplete run's
    numbers are in the tables, marked, never in a figure."""
    try:
        from benchreg.core import figures as fg
    except ImportError:
        notes.append(f"pygal is not installed: no figures. Install them with {INSTALL_HINT}")
        return {}
    from benchreg.core import registry

    out: dict[str, tuple[str, str]] = {}
    ok = [j for j in jobs if j.state == "ok"]
    left_out = sum(j.state == INCOMPLETE for j in jobs)
    if left_out:
        notes.append(
            f"{plural(left_out, 'incomplete job')} not drawn in the figures (no result yet)"
        )
    families = sorted({j.family for j in ok})
    for family, data in report_inputs(sweep_dir, jobs).items():
        registry.load_family(family)
        if family not in registry.report_parts:
            continue
        try:
            made = registry.report_parts.get(family).figures(data)
        except Exception as exc:  # an analysis of another shape must not stop the report
            notes.append(f"{family} figure skipped: {type(exc).__name__}: {exc}")
            continue
        out.update({figure.name: (figure.svg, figure.caption) for figure in made})
    for family in families:
        mine = [j for j in ok if j.family == family]
        metrics = {j.primary()["name"] for j in mine}
        rows = [
            {"label": _figure_label(j, family, len(metrics) > 1), "model": j.model, **j.primary()}
            for j in mine
        ]
        what = f"primary metric ({next(iter(metrics))})" if len(metrics) == 1 else "primary metric"
        svg = fg.primary_metric(rows, f"{family}: {what} per task and model, 95% CI")
        if svg:
            out[f"primary_{family}"] = (
                svg,
                f"{family}: primary metric per task and model with its 95% CI",
            )
    return out


def _figure_label(job: Job, family: str, with_metric: bool) -> str:
    """`gap [correct]`: the task without its family (the figure's title names it), the view, and
    the metric when the family's tasks have different ones."""
    task = job.task.removeprefix(f"{family}/")
    view = (job.record or {}).get("view")
    label = f"{task} [{view}]" if view else task
    return f"{label} ({job.primary()['name']})" if with_metric else label


def _ci(metric: Mapping[str, Any]) -> str:
    ci = metric.get("ci95")
    if not ci or len(ci) != 2 or any(v is None for v in ci):
        return ""
    return f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def strict_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record as its strict view counts: degraded answers invalid, not ok."""
    statuses = dict(record.get("statuses") or {})
    degraded = int(record.get("degraded") or 0)
    if degraded and isinstance(statuses.get("ok"), int):
        statuses["ok"] -= degraded
        statuses["invalid"] = int(statuses.get("invalid") or 0) + degraded
    return {**record, "statuses": statuses}


def _support(job: Job, metric: Mapping[str, Any]) -> Support:
    """n/denominator in the one meaning (:data:`benchreg.core.summary.ND_NOTE`)."""
    return support(job.record or {}, metric)


def _value(job: Job, value: Any) -> Any:
    """A value as a table shows it: an incomplete run's marked so, never as a plain result."""
    if job.state != INCOMPLETE:
        return value
    return f"{html.fmt(value)} ({INCOMPLETE})"


def count_rows(jobs: list[Job]) -> tuple[list[str], list[list[Any]], list[bool]]:
    """One row per job (its folder name says its task and view): state, the statuses other
    than ok, degraded and truncated answers, and the error of a job that did not finish well."""
    header = [
        "job",
        "model",
        "state",
        *COUNT_KEYS,
        "degraded",
        "truncated",
        "error message",
    ]
    rows, bad = [], []
    for job in jobs:
        record = job.record or {}
        counted = job.state in RESULT_STATES
        statuses: Mapping[str, Any] = record.get("statuses") or {}
        counts = [statuses.get(k, "") if counted else "" for k in COUNT_KEYS]
        degraded = record.get("degraded", "") if counted else ""
        truncated = record.get("truncated", "") if counted else ""  # stopped at the token limit
        rows.append(
            [
                job.name,
                job.model or None,
                job.state,
                *counts,
                degraded,
                truncated,
                job.error or "",
            ]
        )
        bad.append(job.state != "ok" or any(c not in ("", 0) for c in [*counts, degraded]))
    return header, rows, bad


def result_rows(jobs: list[Job]) -> tuple[list[str], list[list[Any]]]:
    header = ["task", "view", "model", "primary", "value", "95% CI", "n/denominator", "not ok"]
    rows = []
    for job in jobs:
        if job.state not in RESULT_STATES:
            continue
        p = job.primary()
        sup = _support(job, p)
        rows.append(
            [
                job.task,
                (job.record or {}).get("view"),
                job.model,
                p.get("name"),
                _value(job, p.get("value")),
                _ci(p),
                sup.text,
                sup.not_ok_text,
            ]
        )
    return header, rows


def metric_rows(jobs: list[Job]) -> tuple[list[str], list[list[Any]]]:
    """Every metric each run recorded (the primary marked `*`) with its 95% CI, its method and
    n/denominator; the strict view (degraded answers counted as invalid) where a run has one."""
    with_strict = any((j.record or {}).get("strict") for j in jobs if j.state in RESULT_STATES)
    header = [
        "task",
        "view",
        "model",
        "metric",
        "value",
        "95% CI",
        "CI method",
        "n/denominator",
        "not ok",
    ]
    if with_strict:
        header += ["strict value", "strict 95% CI", "strict n/denominator"]
    rows = []
    for job in jobs:
        if job.state not in RESULT_STATES:
            continue
        record = job.record or {}
        strict = record.get("strict") or {}
        for name, metric in (record.get("metrics") or {}).items():
            mark = " *" if name == record.get("primary") else ""
            sup = _support(job, metric)
            row = [
                job.task,
                record.get("view"),
                job.model,
                f"{name}{mark}",
                _value(job, metric.get("value")),
                _ci(metric),
                metric.get("ci_method") or "",
                sup.text,
                sup.not_ok_text,
            ]
            if with_strict:
                other = strict.get(name) or {}
                value = other.get("value")
                nd = support(strict_record(record), other).text if other else ""
                row += [_value(job, value) if value is not None else "", _ci(other), nd]
            rows.append(row)
    return header, rows


def model_rows(jobs: list[Job]) -> tuple[list[str], list[list[Any]]]:
    """Each model of the sweep: the label the report shows, its identity (identities), jobs."""
    header = ["model", "model id", "jobs"]
    found: dict[str, tuple[str, tuple[str, ...], int]] = {}
    for job in jobs:
        if not job.identity:
            continue
        shown, ids, n = found.get(job.identity, (job.model, job.model_ids, 0))
        found[job.identity] = (shown, ids, n + 1)
    rows = [[shown, ", ".join(ids), n] for shown, ids, n in found.values()]
    return header, sorted(rows, key=lambda r: str(r[0]))


def _states(jobs: list[Job]) -> str:
    """`58 of 60 jobs succeeded; 1 incomplete, 1 failed.`"""
    ok = sum(j.state == "ok" for j in jobs)
    text = f"{ok} of {plural(len(jobs), 'job')} succeeded"
    others = {s: sum(j.state == s for j in jobs) for s in NOT_OK_STATES}
    others[NOT_A_RESULT] = sum(
        j.state == "ok" and not_a_result_reason(j.record) is not None for j in jobs
    )
    extra = ", ".join(f"{k} {s}" for s, k in others.items() if k)
    return text + (f"; {extra}" if extra else "") + "."


def _analysis_files(sweep_dir: Path) -> list[str]:
    return sorted(p.name for p in sweep_dir.glob("analysis_*.md"))


MARK_NOTE = (
    "`*` marks the primary metric; a value marked (incomplete) is from a run whose failed "
    "requests were not asked again: no result."
)
COUNTS_NOTE = (
    "Rows marked: a failed, unfinished or incomplete job, or a run with missing, invalid, "
    "out-of-range, error or degraded samples."
)


@dataclass
class Layout:
    """Everything a report page shows, laid out once for markdown and HTML."""

    title: str
    sweep_dir: Path
    jobs: list[Job]
    figures: dict[str, tuple[str, str]]
    notes: list[str]
    headlines: list[tuple[str, Headline]]
    browse: bool  # the sample browser is written beside the page


def _markdown(layout: Layout) -> str:
    jobs = layout.jobs
    parts = [f"# {layout.title}", "", f"Sweep folder: `{layout.sweep_dir}`", "", _states(jobs)]
    links = [f"[the samples of every job]({SAMPLES_PAGE})"] if layout.browse else []
    links += ["[summary.md](../summary.md)"]
    parts += ["", "Browse: " + " · ".join(links), ""]
    parts += [f"> **Note:** {n}" for n in layout.notes]
    for _, made in layout.headlines:
        parts += ["", headline_view.markdown(made, level=2)]
    failed = [j for j in jobs if j.state != "ok"]
    if failed:
        parts += ["", "## Jobs that did not finish", ""]
        parts += [f"- `{j.name}`: {j.state}{': ' + j.error if j.error else ''}" for j in failed]
    if layout.figures:
        parts += ["", "## Figures", ""]
        parts += [
            f"![{caption}](figures/{name}.svg)\n\n{caption}\n"
            for name, (_, caption) in layout.figures.items()
        ]
    parts += [
        "",
        "## Primary metric per task and model",
        "",
        html.markdown_table(*result_rows(jobs)),
        "",
        ND_NOTE,
        "",
        "## Every metric",
        "",
        MARK_NOTE,
        "",
        html.markdown_table(*metric_rows(jobs)),
        "",
        ND_NOTE,
        "",
        "## Models",
        "",
        html.markdown_table(*model_rows(jobs)),
    ]
    header, rows, bad = count_rows(jobs)
    parts += ["", "## Counts (a row marked ! needs a look)", ""]
    parts.append(
        html.markdown_table(
            ["flag", *header], [["!" if b else "", *r] for r, b in zip(rows, bad, strict=True)]
        )
    )
    parts += ["", COUNTS_NOTE]
    files = _analysis_files(layout.sweep_dir)
    if files:
        parts += ["", "## Analyses", "", *(f"- [{f}](../{f})" for f in files)]
    return "\n".join(parts) + "\n"


def _unfinished_html(jobs: Sequence[Any]) -> list[str]:
    failed = [j for j in jobs if j.state != "ok"]
    if not failed:
        return []
    items = [
        f"<li><code>{html.esc(j.name)}</code>: {html.esc(j.state)}"
        f"{': ' + html.esc(j.error) if j.error else ''}</li>"
        for j in failed
    ]
    return ["<h2>Jobs that did not finish</h2><ul>", *items, "</ul>"]


def _html(layout: Layout) -> str:
    jobs = layout.jobs
    links = []
    if layout.browse:
        links.append(f'<a class="button" href="{SAMPLES_PAGE}">Browse the samples of every job</a>')
    links += ['<a href="report.md">report.md</a>', '<a href="../summary.md">summary.md</a>']
    parts = [
        f"<p class=small>Sweep folder: <code>{html.esc(layout.sweep_dir)}</code></p>",
        f"<p class=states><strong>{html.esc(_states(jobs))}</strong></p>",
        f'<nav class="links">{" · ".join(links)}</nav>',
    ]
    parts += [f'<p class="note">{html.esc(n)}</p>' for n in layout.notes]
    for family, made in layout.headlines:
        parts.append(headline_view.to_html(made, family))
    parts += _unfinished_html(jobs)
    header, rows, bad = count_rows(jobs)
    flagged = [r for r, b in zip(rows, bad, strict=True) if b]
    if flagged:
        parts += [
            "<h2>Runs that need a look</h2>",
            html.table(header, flagged, [True] * len(flagged), cls="counts"),
        ]
    if layout.figures:
        parts.append("<h2>Figures</h2>")
        parts += [
            html.figure(svg, caption, name) for name, (svg, caption) in layout.figures.items()
        ]
    incomplete = [j.state == INCOMPLETE for j in jobs if j.state in RESULT_STATES]
    parts += [
        "<h2>Primary metric per task and model</h2>",
        html.table(*result_rows(jobs), incomplete),
        f"<p class=small>{html.prose(ND_NOTE)}</p>",
    ]
    header_m, rows_m = metric_rows(jobs)
    marked = [str(r[4]).endswith(f"({INCOMPLETE})") for r in rows_m]
    parts += [
        "<h2>Every metric</h2>",
        f"<p class=small>{html.prose(MARK_NOTE)} {html.prose(ND_NOTE)}</p>",
        html.table(header_m, rows_m, marked),
        "<h2>Models</h2>",
        html.table(*model_rows(jobs)),
    ]
    parts += [
        "<h2>Counts</h2>",
        f"<p class=small>{html.esc(COUNTS_NOTE.replace('marked', 'in red'))}</p>",
        html.table(header, rows, bad, cls="counts"),
    ]
    files = _analysis_files(layout.sweep_dir)
    if files:
        parts.append("<h2>Analyses</h2><ul>")
        parts += [f'<li><a href="../{html.esc(f)}">{html.esc(f)}</a></li>' for f in files]
        parts.append("</ul>")
    return html.page(layout.title, parts)
