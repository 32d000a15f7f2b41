"""The report-part contract: what a family adds to a sweep's report.

A family registers one :class:`ReportPart` under its own name in ``registry.report_parts``
(from its ``report.py``). The report (``benchreg.app.report``) lays the parts out and knows no
family: it hands each part a :class:`ReportInput` holding that family's finished jobs and the
sweep's analysis files, and places the figures the part returns. A part that raises is skipped
with a note; the rest of the report is still written.
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


@dataclass(frozen=True, slots=True)
class ReportPart:
    """A family's part of the report: ``figures(input)`` returns its figures (drawing needs
    matplotlib: import it inside the function, so that the family imports without it)."""

    figures: Callable[[ReportInput], list[Figure]]


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
