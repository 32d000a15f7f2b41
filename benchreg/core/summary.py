"""Human-readable reports: the per-run terminal table and the sweep summary (CSV + markdown)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchreg.core.floors import floor_lines
from benchreg.core.not_a_result import NOT_A_RESULT, not_a_result_reason

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
    "not_ok",
)
NOT_OK_STATUSES = ("missing", "invalid", "out_of_range", "error")
# The one meaning of n/denominator in every table benchreg shows (terminal, summary.md, report,
# headlines); stated under each of them.
ND_NOTE = (
    "n/denominator: n = samples answered with status ok, denominator = samples the value is "
    "taken over; the samples that make the difference (missing, invalid, out_of_range, error) "
    "are listed beside it (`not ok`) and count in the value as no answer, never as a hit."
)

ND_SHORT = (
    "n/denominator: answers with status ok / samples the value is over; the other statuses "
    "make the difference (`not ok`)"
)


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 warning`, `2 warnings`, `1 analysis`, `3 analyses`."""
    return f"{count} {word if count == 1 else many or word + 's'}"


@dataclass(frozen=True, slots=True)
class Support:
    """A metric's n/denominator in the one meaning (:data:`ND_NOTE`) and the statuses that make
    the difference."""

    n: int | None
    denominator: int | None
    not_ok: dict[str, int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        if self.n is None and self.denominator is None:
            return ""
        return f"{_fmt(self.n)}/{_fmt(self.denominator)}"

    @property
    def not_ok_text(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in self.not_ok.items() if v)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def support(record: Mapping[str, Any], metric: Mapping[str, Any]) -> Support:
    """n/denominator of ``metric`` (one of ``record``'s) in the one meaning: n = samples with an
    ok answer among the denominator. A metric over every sample of the run takes n from the
    run's statuses (a family's metric may count a missing answer as a scored zero: it is still
    not answered); a metric over part of the samples (retrieval's answerable entries) keeps its
    own n, the difference named by the statuses of its answers (`detail.not_ok`). A metric whose
    n counts something else says what (`detail.n_counts`, e.g. answers with a latency) and
    names the rest (`detail.not_counted`)."""
    n, denominator = _count(metric.get("n")), _count(metric.get("denominator"))
    if denominator is None:
        return Support(n, None)
    detail = metric.get("detail") or {}
    own = detail.get("support")  # a value from other answers than the run's (e.g. repeats)
    if isinstance(own, Mapping):
        rest = own.get("not_ok")
        rest = {str(k): int(v) for k, v in rest.items() if _count(v)} if isinstance(
            rest, Mapping) else {}
        return Support(_count(own.get("n")), _count(own.get("denominator")), rest)
    if detail.get("n_counts"):  # n counts something else than ok answers, and says what
        rest = detail.get("not_counted")
        rest = {str(k): int(v) for k, v in rest.items() if _count(v)} if isinstance(
            rest, Mapping) else {}
        return Support(n, denominator, rest)
    statuses = record.get("statuses") or {}
    total = _count(record.get("n"))
    ok = _count(statuses.get("ok"))
    if total is not None and denominator == total and ok is not None:
        answered = ok if n is None else min(n, ok)
        not_ok = {k: int(statuses[k]) for k in NOT_OK_STATUSES if _count(statuses.get(k))}
        other = denominator - answered - sum(not_ok.values())
        if other > 0:
            not_ok["not scored"] = other  # ok answers the metric could not score
        return Support(answered, denominator, not_ok)
    gap = denominator - n if n is not None else 0
    if gap <= 0:
        return Support(n, denominator)
    named = detail.get("not_ok")  # the statuses of its not-ok answers, in the statuses' words
    if isinstance(named, Mapping):
        not_ok = {k: int(named[k]) for k in NOT_OK_STATUSES if _count(named.get(k))}
        other = gap - sum(not_ok.values())
        if other > 0:
            not_ok["not scored"] = other
        return Support(n, denominator, not_ok)
    # a record without `not_ok`: the gap takes a status's word only when the run has that
    # one not-ok status (its `detail.missing` counts every answer not scored)
    kinds = [k for k in NOT_OK_STATUSES if _count(statuses.get(k))]
    key = kinds[0] if len(kinds) == 1 and statuses[kinds[0]] >= gap else "not scored"
    return Support(n, denominator, {key: gap})


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


def run_table(record: Mapping[str, Any], *, answered: bool = False) -> str:
    """A compact table of one run's metrics (with gates, where the task sets them) and counts.
    ``answered``: n/denominator in the one meaning (:data:`ND_NOTE`), with the statuses that
    make the difference beside it (else as the metrics recorded them)."""
    head = f"{record['task']}  view={record.get('view') or '-'}  model={record['model']}"
    metrics = record["metrics"]
    gated = any("gate" in (m.get("detail") or {}) for m in metrics.values())
    shown = {name: support(record, m) for name, m in metrics.items()} if answered else {}
    with_gap = any(sup.not_ok for sup in shown.values())
    rows = [
        (
            "metric",
            "value",
            "n/denominator",
            *(("not ok",) if with_gap else ()),
            "95% CI",
            *(("gate",) if gated else ()),
        )
    ]
    for name, m in metrics.items():
        mark = " *" if name == record["primary"] else ""
        nd = shown[name].text if answered else _nd_text(m)
        gap = (shown[name].not_ok_text or "-",) if with_gap else ()
        row = (f"{name}{mark}", _fmt(m.get("value")), nd, *gap, _ci_text(m))
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
    lines += floor_lines(record)
    lines.append(f"statuses: {statuses}")
    if counts:
        lines.append(f"counts: {counts}")
    lines.append("(* primary metric)" + (f"; {ND_SHORT}" if answered else ""))
    if answered:
        lines += _n_counts_lines(metrics)
    clusters = {m.get("clusters") for m in metrics.values() if m.get("clusters") is not None}
    if clusters:  # intervals that resampled whole clusters (the task's `cluster`), not samples
        numbers = "/".join(str(c) for c in sorted(clusters))
        lines.append(f"95% CIs: cluster bootstrap over {numbers} clusters")
    if is_incomplete(record):
        lines.append(f"INCOMPLETE: {incomplete_reason(record)}; these numbers are not a result")
    if record.get("benchmark_result") is False:  # the data could not be scored (e.g. void)
        lines.append(f"NOT A BENCHMARK RESULT: {record.get('not_a_result') or 'see the warnings'}")
    return "\n".join(lines)


DEMO = "demo"  # a gate on demonstration data (gold written by the project): no verdict
DEMO_SHOWN = "demo: not a benchmark result"


RESULT = "result"  # a value with its 95% CI: the only state shown or exported as a number
NOT_TESTABLE = "not testable"


def result_state(record: Mapping[str, Any]) -> tuple[str, str]:
    """Whether a finished run's primary value is a result, and if not, the state in words and
    why: incomplete, not a benchmark result, demonstration data, or not testable (nothing to
    take the value over, or no 95% CI)."""
    if is_incomplete(record):
        return INCOMPLETE, incomplete_reason(record)
    reason = not_a_result_reason(record)
    if reason is not None:
        return NOT_A_RESULT, reason
    primary = (record.get("metrics") or {}).get(record.get("primary")) or {}
    counts = record.get("counts") or {}
    if (primary.get("detail") or {}).get("demonstration_entries") or counts.get(
        "demonstration_entries"
    ):
        return DEMO_SHOWN, "demonstration data (gold written by the project)"
    ci = primary.get("ci95")
    if primary.get("value") is None or not primary.get("denominator"):
        return NOT_TESTABLE, "no sample to take the value over"
    if not ci or any(bound is None for bound in ci):
        return NOT_TESTABLE, "no 95% CI recorded (run.bootstrap=0?)"
    return RESULT, ""


def _n_counts_lines(metrics: Mapping[str, Any]) -> list[str]:
    """`latency_p50, latency_p95: n = answers with a latency (any status)`: the metrics whose n
    counts something else than ok answers."""
    by_meaning: dict[str, list[str]] = {}
    for name, m in metrics.items():
        detail = m.get("detail") or {}
        own = detail.get("support")
        if isinstance(own, Mapping) and own.get("counts"):
            meaning = f"n/denominator = {own['counts']}"
        else:
            meaning = f"n = {detail['n_counts']}" if detail.get("n_counts") else ""
        if meaning:
            by_meaning.setdefault(meaning, []).append(name)
    return [f"{', '.join(names)}: {meaning}" for meaning, names in by_meaning.items()]


def gate_text(detail: Mapping[str, Any]) -> str:
    """`>= 0.9 pass` / `>= 0.9 FAIL` / `>= 0.9 inconclusive` (the 95% CI spans the gate) /
    `>= 0.9 n/a` (no entry to judge) / `>= 0.9 demo: not a benchmark result` (demonstration
    data), or empty."""
    if "gate" not in detail:
        return ""
    verdict = gate_verdict(detail)
    return f"{detail['gate']} {DEMO_SHOWN if verdict == DEMO else verdict}"


def gate_verdict(detail: Mapping[str, Any]) -> str:
    """A gate's verdict as shown: pass, FAIL, inconclusive, n/a, or demo when the metric counts
    demonstration entries (`demonstration_entries`: never a pass or a fail, whatever an older
    record says; a record written before verdicts were judged on the interval has only
    `pass`)."""
    verdict = detail.get("verdict")
    if verdict == DEMO or (detail.get("demonstration_entries") and verdict != "n/a"):
        return DEMO
    if verdict in ("pass", "fail", "inconclusive", "n/a"):
        return "FAIL" if verdict == "fail" else str(verdict)
    return {True: "pass", False: "FAIL"}.get(detail.get("pass"), "n/a")


def summary_row(
    job: str,
    record: Mapping[str, Any] | None,
    error: Mapping[str, Any] | None,
    status: str | None = None,
    *,
    answered: bool = False,
) -> dict[str, Any]:
    """A finished job's row (status `ok`, or `incomplete` when its metrics.json says
    `complete: false`: failed requests not asked again, so its value is no result), or
    (``record`` None) a row for a failed, unfinished or never started job with what is known of
    it (``status``, default `failed`). ``answered``: n/denominator in the one meaning
    (:data:`ND_NOTE`) and `not_ok`, the statuses that make the difference."""
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
    extra: dict[str, Any] = {}
    if answered:
        sup = support(record, metric)
        extra = {"n": sup.n, "denominator": sup.denominator, "not_ok": sup.not_ok_text}
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
        **extra,
        **_not_a_result_field(record),
    }


def _not_a_result_field(record: Mapping[str, Any]) -> dict[str, str]:
    reason = not_a_result_reason(record)
    return {"not_a_result": reason} if reason else {}


def summary_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SUMMARY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row.get(k) for k in SUMMARY_COLUMNS})
    return buffer.getvalue()


def short_model_id(identity: Any) -> str:
    """The model identity as the summary table shows it: the same string as in the job's
    metrics.json (`model_id`), so that the two can be matched by eye or by search."""
    return str(identity) if identity else ""


def summary_markdown(
    rows: Sequence[Mapping[str, Any]], title: str = "Sweep summary", *, answered: bool = False
) -> str:
    """The summary table; `model id` is the identity in short form (summary.csv has it in
    full), so two models shown under one name stay apart. An incomplete job's value is marked
    `(incomplete)`: it is no result. ``answered`` (rows made with ``answered`` too): the
    `not ok` column beside n/denominator, the one meaning stated under the table (:data:`ND_NOTE`)
    and the state lines in plain plurals; else the table as earlier releases wrote it."""
    with_gap = answered
    gap_head = " not ok |" if with_gap else ""
    lines = [
        f"# {title}",
        "",
        "| job | task | view | model | model id | primary | value | n/denominator |"
        f"{gap_head} 95% CI | status |",
        "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if with_gap else ""),
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
            reason = r.get("error")
            status = f"{INCOMPLETE}: {reason}" if reason and reason != INCOMPLETE else status
        if r.get("not_a_result") and value:
            value = f"{value} ({NOT_A_RESULT})"
        gap = f" {_cell(r.get('not_ok') or '')} |" if with_gap else ""
        lines.append(
            f"| {r['job']} | {_fmt(r.get('task'))} | {_fmt(r.get('view'))} | "
            f"{_fmt(r.get('model'))} | {short_model_id(r.get('model_id'))} | "
            f"{_fmt(r.get('primary'))} | {value} | "
            f"{nd} |{gap} {ci} | {_cell(status)} |"
        )
    lines += ["", *state_lines(rows, legacy=not answered)]
    if with_gap:
        lines.append(ND_NOTE)
    return "\n".join(lines) + "\n"


def state_lines(rows: Sequence[Mapping[str, Any]], *, legacy: bool = False) -> list[str]:
    """`58 of 60 jobs succeeded.`, then one line per other state and for degraded answers.
    ``legacy``: the wording of earlier releases (`1 job(s) failed.`), which earlier callers
    match."""
    ok = sum(1 for r in rows if r["status"] == "ok")
    lines = [f"{ok} of {plural(len(rows), 'job')} succeeded."]
    for state in NOT_OK_STATES:
        k = sum(1 for r in rows if r["status"] == state)
        if k:
            extra = (
                " (failed requests: run the same sweep again to ask only them again; their "
                "values are no result)"
                if state == INCOMPLETE
                else ""
            )
            jobs = f"{k} job(s)" if legacy else plural(k, "job")
            lines.append(f"{jobs} {state}{extra}.")
    lines += _not_a_result_lines(rows)
    degraded = [r for r in rows if r.get("degraded")]
    if degraded:
        total = sum(int(r["degraded"]) for r in degraded)
        read = "was" if total == 1 and not legacy else "were"
        answers = f"{total} answer(s)" if legacy else plural(total, "answer")
        jobs_with = f"{len(degraded)} job(s)" if legacy else plural(len(degraded), "job")
        lines.append(
            f"{answers} in {jobs_with} {read} read only by a "
            "fallback (`degraded` in their samples.jsonl says why; scored as given): "
            + ", ".join(f"{r['job']} ({r['degraded']})" for r in degraded)
            + "."
        )
    return lines


def _not_a_result_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """`1 job is not a benchmark result: <job> (<why>).`: finished jobs whose numbers are no
    result although they succeeded."""
    marked = [r for r in rows if r.get("not_a_result")]
    if not marked:
        return []
    verb = "is" if len(marked) == 1 else "are"
    jobs = "; ".join(f"{r['job']} ({r['not_a_result']})" for r in marked)
    return [f"{plural(len(marked), 'job')} {verb} {NOT_A_RESULT}: {jobs}."]


def _cell(text: str) -> str:
    """Text in a markdown table cell: no `|` or line break splits the row."""
    return " ".join(str(text).split()).replace("|", "\\|")
