"""The report-part contract: what a family adds to a sweep's report.

A family registers one :class:`ReportPart` under its own name in ``registry.report_parts``
(from its ``report.py``). The report (``benchreg.app.report``) lays the parts out and knows no
family: it hands each part a :class:`ReportInput` holding that family's finished jobs and the
sweep's analysis files, and places what the part returns:

- ``headline(input)``: the family's answer in one small table (:class:`Headline`), shown first on
  the terminal at the end of a sweep and at the top of ``report.md`` / ``index.html``; the app
  renders it as text, markdown and HTML and adds nothing of its own;
- ``figures(input)``: its figures, placed below the headlines.

A part that raises is skipped with a note; the rest of the report is still written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ANALYSIS_PREFIX = "analysis_"  # `<sweep>/analysis_<name>.json`, written by core.analysis


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure of a report: its file stem, SVG text and caption."""

    name: str
    svg: str
    caption: str


TONES = ("pass", "fail")  # how a cell may be marked: green (a claim holds), red (it does not)


@dataclass(frozen=True, slots=True)
class Cell:
    """One headline cell with a mark: ``tone`` "pass" (green, bold in markdown) or "fail" (red).
    A plain cell is a str, int, float or None."""

    text: str
    tone: str | None = None

    def __post_init__(self) -> None:
        if self.tone is not None and self.tone not in TONES:
            raise ValueError(f"tone {self.tone!r}: one of {TONES} or None")

    def __str__(self) -> str:
        return self.text


CellValue = Cell | str | int | float | None


@dataclass(frozen=True, slots=True)
class Headline:
    """A family's answer as one small table: a title, column names, rows (one cell per column)
    and footnotes (what the numbers mean: CIs, tests, n/denominator). Floats are shown with 4
    decimals; format them yourself (a str) for anything else. ``terminal``: what the terminal
    shows instead (e.g. the rows that cannot be tested summarised in one line)."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[CellValue]]
    footnotes: Sequence[str] = ()
    # a shorter form for the terminal, where a row per task that can say only "not testable"
    # buries the answer; the report pages show the full table (None: the same on both)
    terminal: Headline | None = None

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(
                    f"headline {self.title!r}: row {i} has {len(row)} cells for "
                    f"{len(self.columns)} columns"
                )


@dataclass(frozen=True, slots=True)
class ReportInput:
    """What a family's report part may read: its finished jobs' `metrics.json` records and the
    sweep's analysis results."""

    family: str
    sweep_dir: Path
    records: Sequence[Mapping[str, Any]]

    def analysis(self, name: str) -> dict[str, Any] | None:
        """The result of analysis ``name`` in this sweep (None when absent or unreadable)."""
        path = self.sweep_dir / f"{ANALYSIS_PREFIX}{name}.json"
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None


def no_figures(data: ReportInput) -> list[Figure]:
    return []


@dataclass(frozen=True, slots=True)
class ReportPart:
    """A family's part of the report: ``figures(input)`` returns its figures (drawing needs
    pygal: import it, or benchreg.core.figures, inside the function, so that the family imports
    without it);
    ``headline(input)`` its headline table, or None when the sweep holds nothing to headline
    (it must not need pygal: the terminal shows it)."""

    figures: Callable[[ReportInput], list[Figure]] = no_figures
    headline: Callable[[ReportInput], Headline | None] | None = None


def analysis_figure(
    analysis: str, name: str, draw: Callable[[Mapping[str, Any]], str | None], caption: str
) -> Callable[[ReportInput], list[Figure]]:
    """The ``figures`` of a part that draws one figure from one analysis result: ``draw`` gets
    the result of analysis ``analysis`` (no figure when the sweep has none)."""

    def figures(data: ReportInput) -> list[Figure]:
        result = data.analysis(analysis)
        svg = draw(result) if result is not None else None
        return [Figure(name, svg, caption)] if svg else []

    return figures
