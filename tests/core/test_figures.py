"""benchreg.core.figures and the families' figures drawn with it: static, stable SVG; rows in
reading order; CIs as whiskers; values, verdicts and notes written at the bars."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("pygal", reason="report figures need pygal (benchreg[reports])")

from benchreg.core import figures
from benchreg.families.cblue.report import cblue_tasks
from benchreg.families.molp2s.report import molp2s_views
from benchreg.families.reaction_mc.report import reaction_mc_gain

SVG = "{http://www.w3.org/2000/svg}"


def parsed(svg: str) -> ET.Element:
    assert svg.startswith('<?xml version="1.0" encoding="utf-8"?>\n')
    return ET.fromstring(svg.split("\n", 1)[1])


def label_order(svg: str, labels: list[str]) -> list[str]:
    """The labels from the top of the figure down (by their y)."""
    ys = {}
    for text in parsed(svg).iter(f"{SVG}text"):
        if text.text in labels and text.get("y") is not None:
            ys.setdefault(text.text, float(text.get("y")))
    return sorted(ys, key=ys.__getitem__)


def printed(svg: str) -> list[str]:
    """The values written at the bars."""
    return [
        str(t.text) for t in parsed(svg).iter(f"{SVG}text") if "value" in (t.get("class") or "")
    ]


ROWS = [
    {"label": "gap [correct]", "model": "m1", "value": 0.8, "ci95": [0.7, 0.9]},
    {"label": "gap [shuffled]", "model": "m1", "value": 0.3, "ci95": [0.2, 0.4]},
    {"label": "dipole [correct]", "model": "m1", "value": 0.55, "ci95": None},
    {"label": "gap [correct]", "model": "m2", "value": 0.6, "ci95": [0.5, 0.7]},
]


def test_primary_metric_reads_top_down_with_values_and_whiskers() -> None:
    svg = figures.primary_metric(ROWS, "molp2s: primary metric")
    assert svg is not None
    labels = ["gap [correct]", "gap [shuffled]", "dipole [correct]"]
    assert label_order(svg, labels) == labels
    assert sorted(printed(svg)) == ["0.300", "0.550", "0.600", "0.800"]
    assert svg.count('class="ci"') >= 3  # the three known CIs (pygal draws a path per whisker)
    assert ">m1<" in svg and ">m2<" in svg  # two models: a legend


def test_figures_are_static_and_stable() -> None:
    first = figures.primary_metric(ROWS, "t")
    assert first == figures.primary_metric(ROWS, "t")
    assert first is not None
    assert "<script" not in first and "<!--" not in first and "kozea.github.io" not in first


def test_nothing_finite_draws_nothing() -> None:
    assert figures.primary_metric([{"label": "a", "model": "m", "value": None}], "t") is None
    nan = [{"label": "a", "difference": float("nan")}]
    assert figures.paired_differences(nan, "t", "x") is None


def test_paired_differences_marks_the_significant_red() -> None:
    rows = [
        {"label": "gap", "difference": 0.2, "ci95": [0.1, 0.3], "significant": True},
        {"label": "dipole", "difference": -0.05, "ci95": [-0.2, 0.1], "significant": False},
    ]
    svg = figures.paired_differences(rows, "B - A", "difference")
    assert svg is not None
    fills = re.findall(r'<g class="bar" style="fill: (#[0-9a-f]{6})', svg)
    assert sorted(fills) == sorted([figures.FAIL, figures.PALETTE[0]])
    assert printed(svg) and sorted(printed(svg)) == ["+0.200", "-0.050"]
    assert label_order(svg, ["gap", "dipole"]) == ["gap", "dipole"]


def test_stack_puts_panels_one_below_the_other() -> None:
    one = figures.horizontal_bars("A", ["x"], [("s", [figures.point(0.5)])])
    two = figures.horizontal_bars("B", ["x", "y"], [("s", [figures.point(0.5), None])])
    svg = figures.stack([(one, "a"), (two, "b")])
    root = parsed(svg)
    inner = [el for el in root if el.tag == f"{SVG}svg"]
    heights = [float(el.get("height")) for el in inner]
    assert [float(el.get("y")) for el in inner] == [0.0, heights[0]]
    assert float(root.get("height")) == sum(heights)
    assert len({el.get("id") for el in inner}) == 2  # each panel's CSS scoped to itself


def test_cblue_overall_first_in_orange_then_each_task() -> None:
    tasks = {
        "CMeEE-V2": {"metric": "micro_f1", "value": 0.5, "ci95": [0.4, 0.6]},
        "CHIP-CTC": {"metric": "macro_f1", "value": 0.7, "ci95": [0.6, 0.8]},
    }
    group = {"model": "m", "view": "default", "tasks": tasks, "complete": True, "overall": 0.6}
    svg = cblue_tasks({"groups": [group]})
    assert svg is not None
    labels = ["OVERALL", "CHIP-CTC (macro_f1)", "CMeEE-V2 (micro_f1)"]
    assert label_order(svg, labels) == labels
    fills = re.findall(r'<g class="bar" style="fill: (#[0-9a-f]{6})', svg)
    assert sorted(fills) == sorted([figures.PALETTE[1], figures.PALETTE[0], figures.PALETTE[0]])


def test_molp2s_a_bar_per_view_and_the_verdict_beside_each_property() -> None:
    cell = {"accuracy": 0.75, "ci95": [0.5, 0.9]}
    tasks = {
        "molp2s/gap": {"verdict": "not supported", "views": {"correct": cell, "shuffled": cell}},
        "molp2s/dipole": {"views": {"correct": cell}},
    }
    svg = molp2s_views({"models": {"baseline": tasks}})
    assert svg is not None
    assert ">correct<" in svg and ">shuffled<" in svg  # the views are the legend
    assert printed(svg) == ["0.75"] * 3  # gap x 2 views, dipole x 1 (its shuffled bar absent)
    assert re.search(r">dipole \([^)]*\)<", svg) and re.search(r">gap \([^)]*\)<", svg)


def test_reaction_mc_writes_n_and_p_at_each_bar() -> None:
    per = {
        "single_varying": {
            "mean_difference": 0.125,
            "ci95": [0.0, 0.25],
            "pairs": 40,
            "wilcoxon_p": 0.0312,
        }
    }
    svg = reaction_mc_gain({"systems": {"baseline": per}, "metric": "score"})
    assert svg is not None
    assert printed(svg) == ["+0.125 (n=40, p=0.0312)"]
    assert reaction_mc_gain({"systems": {}}) is None


def test_a_chart_without_a_set_range_holds_every_ci_whisker() -> None:
    low, high = figures._span(
        [figures.point(0.04, [-0.11, 0.19]), figures.point(0.22, [0.0, 0.43])]
    )
    assert low < -0.11 and high > 0.43
    assert figures._span([figures.point(0.5)]) == (0.0, 0.52)  # from 0, a little room
    assert figures._span([figures.point(0.0)]) is None  # nothing to span: pygal's own
