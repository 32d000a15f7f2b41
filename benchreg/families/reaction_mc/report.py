"""Reaction-condition MC's part of a sweep report: reference vs control per question type with the
paired difference (the headline and the figure), from
`analysis_reaction_mc_reference_gain.json` (``families/reaction_mc/analysis.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchreg.core import registry
from benchreg.core.reporting import Cell, Headline, ReportInput, ReportPart, analysis_figure
from benchreg.core.summary import plural

ANALYSIS = "reaction_mc_reference_gain"


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def _f(x: Any, digits: int = 4, sign: bool = False) -> str:
    number = _number(x)
    if number is None:
        return "-"
    return f"{number:+.{digits}f}" if sign else f"{number:.{digits}f}"


def _p(x: Any) -> str:
    number = _number(x)
    return "-" if number is None else f"{number:.3g}"


def _difference(pair: Mapping[str, Any]) -> Cell:
    """`+0.1250 [+0.0100, +0.2400]`, green when the CI lies above 0 (the reference helps), red
    when below (it hurts)."""
    ci = pair.get("ci95") or [None, None]
    lo, hi = (_number(c) for c in [*list(ci), None, None][:2])
    text = _f(pair.get("mean_difference"), sign=True)
    if lo is not None and hi is not None:
        text += f" [{lo:+.4f}, {hi:+.4f}]"
    tone = "pass" if lo is not None and lo > 0 else "fail" if hi is not None and hi < 0 else None
    return Cell(text, tone)


def headline(data: ReportInput) -> Headline | None:
    """Per system and question type: the mean score with and without reference conditions over
    the paired questions, their paired difference with its 95% CI and Wilcoxon p, and the exact
    hits with their McNemar p."""
    analysis = data.analysis(ANALYSIS)
    systems = {s: v for s, v in ((analysis or {}).get("systems") or {}).items() if v}
    if not systems:
        return None
    several = len(systems) > 1
    metric = (analysis or {}).get("metric", "score")
    columns = [
        *(["system"] if several else []),
        "question type",
        "pairs",
        "with reference",
        "control (without)",
        "difference [95% CI]",
        "Wilcoxon p",
        "exact hits with / without",
        "McNemar p",
    ]
    rows: list[list[Any]] = []
    for system in sorted(systems):
        for kind, pair in sorted(systems[system].items()):
            rows.append(
                [
                    *([system] if several else []),
                    kind,
                    pair.get("pairs"),
                    _f(pair.get("mean_with_reference")),
                    _f(pair.get("mean_without_reference")),
                    _difference(pair),
                    _p(pair.get("wilcoxon_p")),
                    f"{pair.get('hits_with_reference')} / {pair.get('hits_without_reference')}",
                    _p(pair.get("mcnemar_p")),
                ]
            )
    title = f"Reaction-condition MC: reference vs control ({metric})"
    if not several:
        title += f", {next(iter(systems))}"
    footnotes = [
        f"Difference = with reference - without, the mean over the questions both jobs hold "
        f"(pairs, on the question's base id) of {metric}; 95% paired bootstrap CI "
        f"({(analysis or {}).get('n_boot', '?')} resamples), two-sided Wilcoxon signed-rank p. "
        "Above zero (green when the whole CI is): the reference helps.",
        f"Exact hits ({(analysis or {}).get('hit_metric', 'exact match')}) compared by an exact "
        "McNemar test on the same pairs.",
    ]
    unpaired = sum(
        int(pair.get("unpaired_reference") or 0) + int(pair.get("unpaired_control") or 0)
        for per in systems.values()
        for pair in per.values()
    )
    if unpaired:
        footnotes.append(
            f"{plural(unpaired, 'question')} held by only one of the two jobs: not paired."
        )
    footnotes += [str(n) for n in (analysis or {}).get("notes") or []]
    return Headline(title, columns, rows, footnotes)


def reaction_mc_gain(analysis: Mapping[str, Any]) -> str | None:
    """Reference minus control paired mean difference per question type, with its 95% CI: a bar
    from 0 per system in each question type's row, its value, n and Wilcoxon p at the bar."""
    from benchreg.core.figures import finite, horizontal_bars, point, to_svg

    systems = {s: v for s, v in (analysis.get("systems") or {}).items() if v}
    if not systems:
        return None
    pairs = sorted({q for per in systems.values() for q in per})
    series = []
    for system, per in systems.items():
        values = []
        for q in pairs:
            cell = per.get(q) or {}
            x = cell.get("mean_difference")
            if not finite(x):
                values.append(None)
                continue
            p = cell.get("wilcoxon_p")
            note = f"{x:+.3f} (n={cell.get('pairs')}" + (f", p={p:.3g})" if finite(p) else ")")
            values.append(point(x, cell.get("ci95"), text=note))
        series.append((system, values))
    metric = analysis.get("metric", "score")
    chart = horizontal_bars(
        "Reaction-condition MC: reference vs control",
        pairs,
        series,
        x_title=f"{metric}: with reference - without (paired mean, 95% bootstrap CI)",
    )
    return to_svg(chart, "reaction-mc")


CAPTION = (
    "Reaction-condition MC: paired difference with reference minus control per question "
    "type (95% bootstrap CI, Wilcoxon p; analysis_reaction_mc_reference_gain.json)"
)
figures = analysis_figure(ANALYSIS, "reaction_mc_analysis", reaction_mc_gain, CAPTION)
registry.report_parts.add("reaction_mc", ReportPart(figures=figures, headline=headline))
