"""`python -m benchreg report <sweep_dir>`: a sweep's results as a self-contained HTML page, SVG
figures and markdown, written to `<sweep_dir>/report/` (also at the end of every sweep).

- per task and model: the primary metric with its 95% CI (one figure per family);
- per family: the figures of the family's registered report part (``benchreg.core.reporting``;
  each family's ``report.py``), e.g. accuracy by view with verdicts, or metrics against gates;
- a counts table (missing, invalid, out of range, error, degraded; failed and unfinished jobs) in
  which a broken run is highlighted.

Figures need matplotlib (the `reports` extra); without it the page and the markdown are still
written, with a note saying how to install it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchreg.app.report import html
from benchreg.app.sweepfolder import job_states
from benchreg.core.io import atomic_write_text
from benchreg.core.runfolder import ERROR_FILE, METRICS_FILE

REPORT_DIR = "report"
INSTALL_HINT = "pip install 'benchreg[reports]'  (matplotlib)"
COUNT_KEYS = ("missing", "invalid", "out_of_range", "error")


@dataclass
class ReportResult:
    out_dir: Path
    html: Path
    markdown: Path
    figures: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Job:
    name: str
    state: str  # ok | failed | unfinished | not started
    record: dict[str, Any] | None = None  # metrics.json
    error: str | None = None

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
    def model(self) -> str:
        return str((self.record or {}).get("model") or "")

    def primary(self) -> dict[str, Any]:
        record = self.record or {}
        metric = (record.get("metrics") or {}).get(record.get("primary"), {})
        return {"name": record.get("primary"), **metric}


def read_sweep(sweep_dir: Path) -> list[Job]:
    jobs = []
    for state in job_states(sweep_dir):
        job = Job(state.name, state.state)
        if state.folder is not None and state.state == "ok":
            job.record = json.loads((state.folder / METRICS_FILE).read_text("utf-8"))
        elif state.folder is not None and state.state == "failed":
            error = json.loads((state.folder / ERROR_FILE).read_text("utf-8"))
            job.error = str(error.get("error"))
            job.record = {k: error.get(k) for k in ("task", "view", "model")}
        jobs.append(job)
    return jobs


def write_report(sweep_dir: Path, out_dir: Path | None = None) -> ReportResult:
    sweep_dir = Path(sweep_dir)
    out = Path(out_dir) if out_dir is not None else sweep_dir / REPORT_DIR
    fig_dir = out / "figures"
    jobs = read_sweep(sweep_dir)
    result = ReportResult(out, out / "index.html", out / "report.md")
    figures = _figures(sweep_dir, jobs, result.notes)
    fig_dir.mkdir(parents=True, exist_ok=True)
    for name, (svg, _) in figures.items():
        path = fig_dir / f"{name}.svg"
        atomic_write_text(path, svg)
        result.figures.append(path)
    title = f"benchreg sweep report: {sweep_dir.name}"
    atomic_write_text(result.markdown, _markdown(title, sweep_dir, jobs, figures, result.notes))
    atomic_write_text(result.html, _html(title, sweep_dir, jobs, figures, result.notes))
    return result


def _figures(sweep_dir: Path, jobs: list[Job], notes: list[str]) -> dict[str, tuple[str, str]]:
    """name -> (svg, caption): the primary metric per family, then each family's report part;
    empty with a note when matplotlib is missing."""
    try:
        from benchreg.core import figures as fg
    except ImportError:
        notes.append(f"matplotlib is not installed: no figures. Install them with {INSTALL_HINT}")
        return {}
    from benchreg.core import registry
    from benchreg.core.reporting import ReportInput

    out: dict[str, tuple[str, str]] = {}
    ok = [j for j in jobs if j.state == "ok"]
    families = sorted({j.family for j in ok})
    for family in families:
        rows = [
            {"label": f"{j.label} ({j.primary()['name']})", "model": j.model, **j.primary()}
            for j in ok
            if j.family == family
        ]
        svg = fg.primary_metric(rows, f"{family}: primary metric per task and model, 95% CI")
        if svg:
            out[f"primary_{family}"] = (
                svg,
                f"{family}: primary metric per task and model with its 95% CI",
            )
    for family in families:
        if family not in registry.report_parts:
            continue
        records = [j.record for j in ok if j.family == family and j.record]
        try:
            made = registry.report_parts.get(family).figures(
                ReportInput(family, sweep_dir, records)
            )
        except Exception as exc:  # an analysis of another shape must not stop the report
            notes.append(f"{family} figure skipped: {type(exc).__name__}: {exc}")
            continue
        out.update({figure.name: (figure.svg, figure.caption) for figure in made})
    return out


def count_rows(jobs: list[Job]) -> tuple[list[str], list[list[Any]], list[bool]]:
    header = ["job", "task", "view", "model", "state", *COUNT_KEYS, "degraded", "error message"]
    rows, bad = [], []
    for job in jobs:
        record = job.record or {}
        statuses: Mapping[str, Any] = record.get("statuses") or {}
        counts = [statuses.get(k, "") if job.state == "ok" else "" for k in COUNT_KEYS]
        degraded = record.get("degraded", "") if job.state == "ok" else ""
        rows.append(
            [
                job.name,
                record.get("task"),
                record.get("view"),
                record.get("model"),
                job.state,
                *counts,
                degraded,
                job.error or "",
            ]
        )
        bad.append(job.state != "ok" or any(c not in ("", 0) for c in [*counts, degraded]))
    return header, rows, bad


def result_rows(jobs: list[Job]) -> tuple[list[str], list[list[Any]]]:
    header = ["task", "view", "model", "primary", "value", "95% CI", "n/denominator"]
    rows = []
    for job in jobs:
        if job.state != "ok":
            continue
        p = job.primary()
        ci = p.get("ci95")
        rows.append(
            [
                job.task,
                (job.record or {}).get("view"),
                job.model,
                p.get("name"),
                p.get("value"),
                f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci and None not in ci else "",
                f"{p.get('n')}/{p.get('denominator')}",
            ]
        )
    return header, rows


def _headline(jobs: list[Job]) -> str:
    ok = sum(j.state == "ok" for j in jobs)
    text = f"{ok} of {len(jobs)} jobs succeeded"
    others = {s: sum(j.state == s for j in jobs) for s in ("failed", "unfinished", "not started")}
    extra = ", ".join(f"{k} {s}" for s, k in others.items() if k)
    return text + (f"; {extra}" if extra else "") + "."


def _analysis_files(sweep_dir: Path) -> list[str]:
    return sorted(p.name for p in sweep_dir.glob("analysis_*.md"))


def _markdown(title: str, sweep_dir: Path, jobs: list[Job], figures: dict, notes: list[str]) -> str:
    parts = [f"# {title}", "", f"Sweep folder: `{sweep_dir}`", "", _headline(jobs), ""]
    parts += [f"> **Note:** {n}" for n in notes]
    failed = [j for j in jobs if j.state != "ok"]
    if failed:
        parts += ["", "## Jobs that did not finish", ""]
        parts += [f"- `{j.name}`: {j.state}{': ' + j.error if j.error else ''}" for j in failed]
    parts += [
        "",
        "## Primary metric per task and model",
        "",
        html.markdown_table(*result_rows(jobs)),
    ]
    header, rows, bad = count_rows(jobs)
    parts += ["", "## Counts (a row marked ! needs a look)", ""]
    parts.append(
        html.markdown_table(
            ["flag", *header], [["!" if b else "", *r] for r, b in zip(rows, bad, strict=True)]
        )
    )
    if figures:
        parts += ["", "## Figures", ""]
        parts += [
            f"![{caption}](figures/{name}.svg)\n\n{caption}\n"
            for name, (_, caption) in figures.items()
        ]
    files = _analysis_files(sweep_dir)
    if files:
        parts += ["", "## Analyses", "", *(f"- [{f}](../{f})" for f in files)]
    return "\n".join(parts) + "\n"


def _html(title: str, sweep_dir: Path, jobs: list[Job], figures: dict, notes: list[str]) -> str:
    parts = [
        f"<p>Sweep folder: <code>{html.esc(sweep_dir)}</code></p>",
        f"<p><strong>{html.esc(_headline(jobs))}</strong></p>",
    ]
    parts += [f'<p class="note">{html.esc(n)}</p>' for n in notes]
    failed = [j for j in jobs if j.state != "ok"]
    if failed:
        parts.append("<h2>Jobs that did not finish</h2><ul>")
        parts += [
            f"<li><code>{html.esc(j.name)}</code>: {html.esc(j.state)}"
            f"{': ' + html.esc(j.error) if j.error else ''}</li>"
            for j in failed
        ]
        parts.append("</ul>")
    header, rows, bad = count_rows(jobs)
    flagged = [r for r, b in zip(rows, bad, strict=True) if b]
    if flagged:
        parts += [
            "<h2>Runs that need a look</h2>",
            html.table(header, flagged, [True] * len(flagged)),
        ]
    if figures:
        parts.append("<h2>Figures</h2>")
        parts += [html.figure(svg, caption, name) for name, (svg, caption) in figures.items()]
    parts += ["<h2>Primary metric per task and model</h2>", html.table(*result_rows(jobs))]
    parts += [
        "<h2>Counts</h2>",
        "<p class=small>Rows in red: a failed or unfinished job, or a run with missing, "
        "invalid, out-of-range, error or degraded samples.</p>",
        html.table(header, rows, bad),
    ]
    files = _analysis_files(sweep_dir)
    if files:
        parts.append("<h2>Analyses</h2><ul>")
        parts += [f'<li><a href="../{html.esc(f)}">{html.esc(f)}</a></li>' for f in files]
        parts.append("</ul>")
    return html.page(title, parts)
