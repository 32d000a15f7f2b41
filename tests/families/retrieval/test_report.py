"""Retrieval's report part: the `retrieval_gates` figure (one panel per gated metric, bars
coloured by the verdict, the verdict and gate written at each bar) and `figures`."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from benchreg.core import registry
from benchreg.core.reporting import ReportInput
from benchreg.families.retrieval.report import figures, retrieval_gates

pytest.importorskip("pygal", reason="report figures need pygal (benchreg[reports])")
from benchreg.core import figures as figure_helpers  # imports pygal

PASS, FAIL, NA = figure_helpers.PASS, figure_helpers.FAIL, figure_helpers.NA


def record(task: str, model: str, **metrics: dict[str, Any]) -> dict[str, Any]:
    return {"task": task, "model": model, "metrics": metrics}


def gated(value: float, gate: str, verdict: bool | None) -> dict[str, Any]:
    return {"value": value, "detail": {"gate": gate, "pass": verdict}}


RECORDS = [
    record(
        "retrieval/pdf",
        "bm25",
        **{
            "recall@10": gated(0.95, ">= 0.90", True),
            "false_recall": gated(0.4, "<= 0.10", False),
            "mrr": {"value": 0.7, "detail": {}},
        },
    ),
    record("retrieval/video", "bm25", **{"recall@10": gated(0.5, ">= 0.90", None)}),
]


def test_registered() -> None:
    assert registry.report_parts.get("retrieval").figures is figures


def test_no_records_no_figure(tmp_path: Path) -> None:
    assert figures(ReportInput("retrieval", tmp_path, [])) == []


def bar_fills(svg: str) -> list[str]:
    return re.findall(r'<g class="bar" style="fill: (#[0-9a-f]{6})', svg)


def test_one_panel_per_gated_metric_coloured_by_verdict() -> None:
    svg = retrieval_gates(RECORDS)
    assert svg is not None and svg.lstrip().startswith("<?xml") and svg.endswith("</svg>")
    ET.fromstring(svg.split("\n", 1)[1])  # well-formed XML
    assert svg.count('class="pygal-chart"') == 2  # recall@10 and false_recall; mrr has no gate
    assert sorted(bar_fills(svg)) == sorted([PASS, NA, FAIL])
    for text in ("0.95 pass (&gt;= 0.90)", "0.50 n/a (&gt;= 0.90)", "0.40 FAIL (&lt;= 0.10)"):
        assert text in svg


def test_the_figure_is_static() -> None:
    svg = retrieval_gates(RECORDS)
    assert svg is not None
    assert "<script" not in svg and "<!--" not in svg and "http://kozea" not in svg


def test_nothing_gated_or_finite_draws_nothing() -> None:
    assert retrieval_gates([record("retrieval/pdf", "m", mrr={"value": 0.7})]) is None
    nan = record("retrieval/pdf", "m", **{"recall@10": gated(float("nan"), ">= 0.9", None)})
    assert retrieval_gates([nan, {"task": "retrieval/x", "metrics": None}]) is None


def test_the_same_data_gives_the_same_svg() -> None:
    assert retrieval_gates(RECORDS) == retrieval_gates(RECORDS)


def test_figures_wraps_the_svg(tmp_path: Path) -> None:
    (figure,) = figures(ReportInput("retrieval", tmp_path, RECORDS))
    assert figure.name == "retrieval_gates"
    assert figure.svg == retrieval_gates(RECORDS)
    assert figure.caption.startswith("Retrieval: gated metrics per modality")
    assert figures(ReportInput("retrieval", tmp_path, [RECORDS[0] | {"metrics": {}}])) == []
