"""Human-readable reports: the per-run terminal table and the sweep summary (CSV + markdown)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

INCOMPLETE = "incomplete"
NOT_OK_STATES = (INCOMPLETE, "failed", "unfinished", "not started")
SUMMARY_COLUMNS = (
    "job",
    "task",
    "view",
    "model",
    "model_id",
    "primary",
    "value",
    "n",
    "denominator",
    "ci95_lo",
    "ci95_hi",
    "degraded",
    "status",
    "error",
)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return "" if value is None else str(value)


def _ci_text(metric: Mapping[str, Any]) -> str:
    ci = metric.get("ci95")
    if not ci or len(ci) != 2 or any(v is None for v in ci):
        return ""
    return f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def _nd_text(metric: Mapping[str, Any]) -> str:
    n, denominator = metric.get("n"), metric.get("denominator")
    if n is None and denominator is None:
        return ""
    return f"{_fmt(n)}/{_fmt(denominator)}"


def is_incomplete(record: Mapping[str, Any] | None) -> bool:
    """A run whose failed requests make it no result (`complete: false`; older records without
    the key are complete)."""
    return record is not None and record.get("complete") is False


def incomplete_reason(record: Mapping[str, Any]) -> str:
    """`3 of 16 requests failed (timeout: 3)`: why an incomplete run is no result."""
    info = record.get("incomplete")
    info = info if isinstance(info, Mapping) else {}
    errors = info.get("errors", (record.get("statuses") or {}).get("error"))
    total = info.get("of", record.get("n"))
    text = f"{errors} of {total} requests failed" if errors is not None else "requests failed"
    causes = info.get("by_cause")
    if isinstance(causes, Mapping) and causes:
        text += " (" + ", ".join(f"{cause}: {n}" for cause, n in causes.items()) + ")"
    return text


def run_table(record: Mapping[str, Any]) -> str:
    """A compact table of one run's metrics (with gates, where the task sets them) and counts."""
    head = f"{record['task']}  view={record.get('view') or '-'}  model={record['model']}"
    metrics = record["metrics"]
    gated = any("gate" in (m.get("detail") or {}) for m in metrics.values())
    rows = [("metric", "value", "n/denominator", "95% CI", *(("gate",) if gated else ()))]
    for name, m in metrics.items():
        mark = " *" if name == record["primary"] else ""
        row = (f"{name}{mark}", _fmt(m.get("value")), _nd_text(m), _ci_text(m))
        if gated:
            row = (*row, gate_text(m.get("detail") or {}))
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [head]
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    statuses = ", ".join(f"{k}={v}" for k, v in record.get("statuses", {}).items() if v)
    counts = ", ".join(f"{k}={v}" for k, v in record.get("counts", {}).items())
    lines.append(f"statuses: {statuses}")
    if counts:
        lines.append(f"counts: {counts}")
    lines.append("(* primary metric)")
    if is_incomplete(record):
        lines.append(f"INCOMPLETE: {incomplete_reason(record)}; these numbers are not a result")
    return "\n".join(lines)


def gate_text(detail: Mapping[str, Any]) -> str:
    """`>= 0.9 pass` / `>= 0.9 FAIL` / `>= 0.9 n/a` (no entry to judge), or empty."""
    if "gate" not in detail:
        return ""
    verdict = {True: "pass", False: "FAIL"}.get(detail.get("pass"), "n/a")
    return f"{detail['gate']} {verdict}"


def summary_row(
    job: str,
    record: Mapping[str, Any] | None,
    error: Mapping[str, Any] | None,
    status: str | None = None,
) -> dict[str, Any]:
    """A finished job's row (status `ok`, or `incomplete` when its metrics.json says
    `complete: false`: failed requests not asked again, so its value is no result), or
    (``record`` None) a row for a failed, unfinished or never started job with what is known of
    it (``status``, default `failed`)."""
    if record is None:
        err = error or {}
        return {
            "job": job,
            "task": err.get("task"),
            "view": err.get("view"),
            "model": err.get("model"),
            "model_id": err.get("model_id"),
            "status": status or "failed",
            "error": err.get("error"),
        }
    primary = record["primary"]
    metric = record["metrics"][primary]
    ci = metric.get("ci95") or [None, None]
    incomplete = is_incomplete(record) or status == INCOMPLETE
    return {
        "job": job,
        "task": record["task"],
        "view": record.get("view"),
        "model": record["model"],
        # the identity that tells two models apart (older run folders: the display name)
        "model_id": record.get("model_id") or record["model"],
        "primary": primary,
        "value": metric.get("value"),
        "n": metric.get("n"),
        "denominator": metric.get("denominator"),
        "ci95_lo": ci[0],
        "ci95_hi": ci[1],
        "degraded": record.get("degraded", 0),
        "status": INCOMPLETE if incomplete else "ok",
        "error": incomplete_reason(record) if incomplete else None,
    }


def summary_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SUMMARY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row.get(k) for k in SUMMARY_COLUMNS})
    return buffer.getvalue()


def short_model_id(identity: Any) -> str:
    """The model identity as the summary table shows it (see core.analysis.short_identity)."""
    from benchreg.core.analysis import short_identity

    return short_identity(str(identity)) if identity else ""


def summary_markdown(rows: Sequence[Mapping[str, Any]], title: str = "Sweep summary") -> str:
    """The summary table; `model id` is the identity in short form (summary.csv has it in
    full), so two models shown under one name stay apart. An incomplete job's value is marked
    `(incomplete)`: it is no result."""
    lines = [
        f"# {title}",
        "",
        "| job | task | view | model | model id | primary | value | n/denominator | 95% CI "
        "| status |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lo, hi = r.get("ci95_lo"), r.get("ci95_hi")
        ci = f"[{lo:.4f}, {hi:.4f}]" if lo is not None and hi is not None else ""
        nd = f"{_fmt(r.get('n'))}/{_fmt(r.get('denominator'))}" if r.get("n") is not None else ""
        status, value = r["status"], _fmt(r.get("value"))
        if status == "failed":
            status = f"failed: {r.get('error')}"
        elif status == INCOMPLETE:
            value = f"{value} ({INCOMPLETE})" if value else value
            status = f"{INCOMPLETE}: {r.get('error')}" if r.get("error") else status
        lines.append(
            f"| {r['job']} | {_fmt(r.get('task'))} | {_fmt(r.get('view'))} | "
            f"{_fmt(r.get('model'))} | {short_model_id(r.get('model_id'))} | "
            f"{_fmt(r.get('primary'))} | {value} | "
            f"{nd} | {ci} | {_cell(status)} |"
        )
    ok = sum(1 for r in rows if r["status"] == "ok")
    lines += ["", f"{ok} of {len(rows)} jobs succeeded."]
    for state in NOT_OK_STATES:
        k = sum(1 for r in rows if r["status"] == state)
        if k:
            extra = (
                " (failed requests: run the same sweep again to ask only them again; their "
                "values are no result)"
                if state == INCOMPLETE
                else ""
            )
            lines.append(f"{k} job(s) {state}{extra}.")
    degraded = [r for r in rows if r.get("degraded")]
    if degraded:
        total = sum(int(r["degraded"]) for r in degraded)
        lines.append(
            f"{total} answer(s) in {len(degraded)} job(s) were read only by a fallback "
            "(`degraded` in their samples.jsonl says why; scored as given): "
            + ", ".join(f"{r['job']} ({r['degraded']})" for r in degraded)
            + "."
        )
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text in a markdown table cell: no `|` or line break splits the row."""
    return " ".join(str(text).split()).replace("|", "\\|")
