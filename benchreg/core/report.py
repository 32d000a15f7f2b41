"""Human-readable reports: the per-run terminal table and the sweep summary (CSV + markdown)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

SUMMARY_COLUMNS = (
    "job",
    "task",
    "view",
    "model",
    "primary",
    "value",
    "n",
    "denominator",
    "ci95_lo",
    "ci95_hi",
    "status",
    "error",
)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return "" if value is None else str(value)


def run_table(record: Mapping[str, Any]) -> str:
    """A compact table of one run's metrics and counts."""
    head = f"{record['task']}  view={record.get('view') or '-'}  model={record['model']}"
    rows = [("metric", "value", "n/denominator", "95% CI")]
    for name, m in record["metrics"].items():
        ci = m.get("ci95")
        mark = " *" if name == record["primary"] else ""
        rows.append(
            (
                f"{name}{mark}",
                _fmt(m["value"]),
                f"{m['n']}/{m['denominator']}",
                f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [head]
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    counts = ", ".join(f"{k}={v}" for k, v in record.get("counts", {}).items())
    lines.append(f"counts: {counts}   (* primary metric)")
    return "\n".join(lines)


def summary_row(
    job: str, record: Mapping[str, Any] | None, error: Mapping[str, Any] | None
) -> dict[str, Any]:
    if record is None:
        err = error or {}
        return {
            "job": job,
            "task": err.get("task"),
            "view": err.get("view"),
            "model": err.get("model"),
            "status": "failed",
            "error": err.get("error"),
        }
    primary = record["primary"]
    metric = record["metrics"][primary]
    ci = metric.get("ci95") or [None, None]
    return {
        "job": job,
        "task": record["task"],
        "view": record.get("view"),
        "model": record["model"],
        "primary": primary,
        "value": metric["value"],
        "n": metric["n"],
        "denominator": metric["denominator"],
        "ci95_lo": ci[0],
        "ci95_hi": ci[1],
        "status": "ok",
        "error": None,
    }


def summary_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SUMMARY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row.get(k) for k in SUMMARY_COLUMNS})
    return buffer.getvalue()


def summary_markdown(rows: Sequence[Mapping[str, Any]], title: str = "Sweep summary") -> str:
    lines = [
        f"# {title}",
        "",
        "| job | task | view | model | primary | value | n/denominator | 95% CI | status |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ci = f"[{r['ci95_lo']:.4f}, {r['ci95_hi']:.4f}]" if r.get("ci95_lo") is not None else ""
        nd = f"{r['n']}/{r['denominator']}" if r.get("n") is not None else ""
        status = r["status"] if r["status"] == "ok" else f"failed: {r.get('error')}"
        lines.append(
            f"| {r['job']} | {_fmt(r.get('task'))} | {_fmt(r.get('view'))} | "
            f"{_fmt(r.get('model'))} | {_fmt(r.get('primary'))} | {_fmt(r.get('value'))} | "
            f"{nd} | {ci} | {status} |"
        )
    ok = sum(1 for r in rows if r["status"] == "ok")
    lines += ["", f"{ok} of {len(rows)} jobs succeeded."]
    return "\n".join(lines) + "\n"
