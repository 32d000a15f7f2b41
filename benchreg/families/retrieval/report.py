"""Retrieval's part of a sweep report: the gate table per modality (the headline) and every gated
metric per modality against its gate (the figure), read from the jobs' metrics.json records
only (each gated metric's `detail.gate` / `detail.pass`, its n and denominator, and the sha256 of
the set and manifest files the run read), with the floors of the same metric beside each system's
value (the job's `floor`: rankings that read no text, floors.py) and the lift over them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchreg.core import registry
from benchreg.core.not_a_result import NOT_A_RESULT, not_a_result_reason
from benchreg.core.reporting import Cell, Headline, ReportInput, ReportPart
from benchreg.core.reporting import Figure as ReportFigure
from benchreg.core.summary import DEMO, DEMO_SHOWN, ND_NOTE, gate_verdict, support

SHA_SHOWN = 12  # hex digits of a sha256 shown in the table (the full value is in metrics.json)
NBSP = "\u00a0"  # keeps a CI on one line when a narrow terminal wraps the cell


def figures(data: ReportInput) -> list[ReportFigure]:
    svg = retrieval_gates(data.records) if data.records else None
    caption = (
        "Retrieval: gated metrics per modality with their 95% CI (green pass, red fail, grey "
        "inconclusive, not testable, demonstration data or not a benchmark result; the value, "
        "verdict and gate beside each bar)"
    )
    return [ReportFigure("retrieval_gates", svg, caption)] if svg else []


def _modality(record: Mapping[str, Any]) -> str:
    return str(record.get("task") or "").split("/")[-1]


def _data_files(record: Mapping[str, Any]) -> str:
    """The set and manifest files the run read with their sha256, shortened: the set file named
    after the modality (the embedded sample's layout), else every set file the run read (an
    imported root's are named after their source, e.g. `set locomo <sha>`), and the manifest."""
    data = (record.get("sha256") or {}).get("data") or {}
    if not isinstance(data, Mapping):
        return ""
    modality = _modality(record)
    names = {str(k).rsplit("/", 1)[-1]: v for k, v in data.items()}
    manifests = [v for name, v in names.items() if "manifest" in name]
    sets = {name.split(".")[0]: v for name, v in names.items() if "manifest" not in name}
    if modality in sets:
        sets = {modality: sets[modality]}
    lines = [
        f"set{NBSP}{str(sha)[:SHA_SHOWN]}"
        if stem == modality
        else f"set{NBSP}{stem}{NBSP}{str(sha)[:SHA_SHOWN]}"
        for stem, sha in sets.items()
    ]
    lines += [f"manifest{NBSP}{str(m)[:SHA_SHOWN]}" for m in manifests[:1]]
    return "\n".join(lines)


def _value(metric: Mapping[str, Any]) -> str:
    value = metric.get("value")
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "n/a"
    ci = metric.get("ci95") or []
    if len(ci) == 2 and all(isinstance(c, int | float) for c in ci):
        return f"{value:.3f} [{ci[0]:.3f},{NBSP}{ci[1]:.3f}]"
    return f"{value:.3f}"


def _verdict(detail: Mapping[str, Any]) -> Cell:
    verdict = gate_verdict(detail)
    if verdict == "pass":
        return Cell("pass", "pass")
    if verdict == "FAIL":
        return Cell("FAIL", "fail")
    if verdict == "inconclusive":  # the 95% CI spans the gate
        return Cell("inconclusive")
    if verdict == DEMO:  # gold written by the project: no verdict, never a pass
        return Cell(DEMO_SHOWN)
    return Cell("n/a (nothing to judge)")


def headline(data: ReportInput) -> Headline | None:
    """Per modality (and view, model): every gated metric with its value, 95% CI, n/denominator
    and the statuses beside it, the gate and its verdict, and the sha256 of the set and manifest
    the run read (on the modality's first row)."""
    jobs = sorted(
        (r for r in data.records if isinstance(r.get("metrics"), Mapping)),
        key=lambda r: (_modality(r), str(r.get("view") or ""), str(r.get("model") or "")),
    )
    rows: list[list[Any]] = []
    notes: set[str] = set()
    runs = {(str(r.get("view") or "-"), str(r.get("model") or "")) for r in jobs}
    several = len(runs) > 1
    for record in jobs:
        rows += _gate_rows(record, several, notes)
    if not rows:
        return None
    columns = [
        "modality",
        *(["view", "model"] if several else []),
        "gated metric",
        "value [95% CI]",
        "n/denominator",
        "not ok",
        "gate",
        "verdict",
        "sha256 read",
        "floor (first 10 / random)",
        "lift over floor",
    ]
    footnotes = [
        "A `>=` gate must be reached, a `<=` gate must not be exceeded; n/a: no entry to judge "
        "(an empty denominator).",
        ND_NOTE + " A metric over part of a set (answerable or unanswerable entries) has that part "
        "as its denominator.",
        FLOOR_NOTE,
        f"sha256: the first {SHA_SHOWN} hex digits of the set and manifest files the run read "
        "(in full under sha256.data in each job's metrics.json).",
        *sorted(f"Data: {note}." for note in notes),
        *_not_a_result_notes(jobs),
    ]
    title = "Retrieval: gates per modality"
    if not several and runs:
        view, model = next(iter(runs))
        title += f" ({model}, view {view})"
    return Headline(title, columns, rows, footnotes)


def _not_a_result_notes(jobs: Sequence[Mapping[str, Any]]) -> list[str]:
    """One footnote per job whose data could not be scored as a benchmark (metrics.json
    `benchmark_result: false`): its gates have no verdict."""
    notes = []
    for record in jobs:
        reason = not_a_result_reason(record)
        if reason:
            run = f"{_modality(record)} ({record.get('view') or '-'}, {record.get('model')})"
            notes.append(f"{NOT_A_RESULT[0].upper()}{NOT_A_RESULT[1:]}: {run}: {reason}.")
    return notes


def _gate_rows(record: Mapping[str, Any], several: bool, notes: set[str]) -> list[list[Any]]:
    """The headline's rows of one job: one per gated metric (the job's modality, view, model
    and files on the first); the data notes of its metrics are added to ``notes``."""
    gated = [
        (name, m)
        for name, m in record["metrics"].items()
        if isinstance(m, Mapping) and "gate" in (m.get("detail") or {})
    ]
    read = _data_files(record)
    void = not_a_result_reason(record) is not None
    rows: list[list[Any]] = []
    for i, (name, metric) in enumerate(gated):
        detail = metric.get("detail") or {}
        sup = support(record, metric)
        if detail.get("data"):
            notes.add(str(detail["data"]))
        first = i == 0
        run = [record.get("view") or "-", record.get("model") or ""] if several else []
        files = read if first else ""
        rows.append(
            [
                _modality(record) if first else "",
                *(run if first else ["" for _ in run]),
                name,
                _value(metric),
                sup.text,
                sup.not_ok_text,
                str(detail.get("gate")),
                Cell(NOT_A_RESULT) if void else _verdict(detail),
                files,
                *_floor_cells(record, name, metric),
            ]
        )
    return rows


FLOOR_NOTE = (
    "Floor: the same metric of rankings that read no text, on the same entries (metrics.json "
    "`floor`): the first 10 units of each in-scope source (video: 10 equal windows of the clip) "
    "/ a seeded random order. Lift: the value minus the higher floor (for a `<=` gate, the "
    "lower floor minus the value); a retriever that does not lift the score over the floor has "
    "learnt where gold sits, not what it says."
)


def _floor_cells(record: Mapping[str, Any], name: str, metric: Mapping[str, Any]) -> list[str]:
    """The floors' values of metric ``name`` and the lift of the system's value over the best
    floor (empty cells when the run has no floor for it)."""
    floors = [
        f["metrics"][name].get("value")
        for f in (record.get("floor") or {}).values()
        if isinstance(f, Mapping) and name in (f.get("metrics") or {})
    ]
    numbers = [v for v in floors if isinstance(v, int | float)]
    if not numbers:
        return ["", ""]
    shown = " / ".join(f"{v:.3f}" if isinstance(v, int | float) else "n/a" for v in floors)
    value = metric.get("value")
    if not isinstance(value, int | float):
        return [shown, "n/a"]
    lower_better = str((metric.get("detail") or {}).get("gate", "")).startswith("<")
    lift = min(numbers) - value if lower_better else value - max(numbers)
    return [shown, f"{lift:+.3f}"]


registry.report_parts.add("retrieval", ReportPart(figures=figures, headline=headline))


def retrieval_gates(jobs: Sequence[Mapping[str, Any]]) -> str | None:
    """Every gated retrieval metric per modality: a panel per metric, a row per modality (and
    model) with its 95% CI, the bar coloured by the gate verdict, the value, verdict and gate
    written beside it."""
    from benchreg.core.figures import FAIL, NA, PASS, horizontal_bars, point, stack

    gated = _gated_bars(jobs)
    if not gated:
        return None
    models = {str(job.get("model", "")) for job in jobs}
    charts = []
    for k, (name, bars) in enumerate(gated.items()):
        values = []
        for _label, metric, gate, verdict in bars:
            value = float(metric["value"])
            color = {"pass": PASS, "FAIL": FAIL}.get(verdict, NA)
            text = f"{value:.2f} {verdict} ({gate})"
            values.append(point(value, metric.get("ci95"), text=text, color=color))
        chart = horizontal_bars(
            f"retrieval {name} per modality (gate {bars[0][2]})"
            + (f": {next(iter(models))}" if len(models) == 1 else ""),
            [b[0] for b in bars],
            [(name, values)],
            x_title=f"{name} (95% CI)",
            value_range=(0.0, 1.0) if all(0 <= v["value"] <= 1 for v in values) else None,
            legend=False,
        )
        charts.append((chart, f"retrieval-{k}"))
    return stack(charts)


def _gated_bars(
    jobs: Sequence[Mapping[str, Any]],
) -> dict[str, list[tuple[str, Mapping[str, Any], str, str]]]:
    """Per gated metric: (row label, metric, gate, verdict) of each job that has it. A job whose
    data is no benchmark result has no verdict (never a green bar); with one model the label
    is the modality alone (the model goes in the title)."""
    from benchreg.core.figures import finite

    gated: dict[str, list[tuple[str, Mapping[str, Any], str, str]]] = {}
    models = {str(job.get("model", "")) for job in jobs}
    for job in jobs:
        void = not_a_result_reason(job) is not None
        for name, metric in (job.get("metrics") or {}).items():
            detail = metric.get("detail") or {}
            if "gate" in detail and finite(metric.get("value")):
                model = "" if len(models) == 1 else job.get("model", "")
                label = f"{job['task'].split('/')[-1]} {model}".strip()
                verdict = "not a result" if void else gate_verdict(detail)
                gated.setdefault(name, []).append((label, metric, str(detail["gate"]), verdict))
    return gated
