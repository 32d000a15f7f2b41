"""Figures read at a glance, checked where they are seen (headless Chromium): every series' legend
entry lies inside the picture, and no value written at a bar sits on a bar or a whisker of the
confidence intervals. Screenshots go to pytest's tmp dir."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.app.test_report_browser import chromium, opened

pytestmark = pytest.mark.slow

VIEWS = ["correct", "shuffled", "counterfactual", "structure_only"]

# boxes of every legend entry's text, every value text and every bar and whisker, in the SVG
# file's own coordinates (its root element is the viewport)
BOXES_JS = """JSON.stringify((() => {
  const root = document.documentElement, r = root.getBoundingClientRect();
  const box = e => { const b = e.getBoundingClientRect();
    return {text: e.textContent, left: b.left - r.left, right: b.right - r.left,
            top: b.top - r.top, bottom: b.bottom - r.top}; };
  return {width: r.width, height: r.height,
    legend: Array.from(document.querySelectorAll('.legends .legend text')).map(box),
    values: Array.from(document.querySelectorAll('.text-overlay text.value')).map(box),
    marks: Array.from(document.querySelectorAll('.plot .series rect.rect, .plot .ci path'))
      .map(box)};
})())"""


def _boxes(svg: Path, tmp: Path) -> dict[str, Any]:
    with opened(svg, tmp) as view:
        found = json.loads(view.js(BOXES_JS))
        view.screenshot(tmp / f"{svg.stem}.png")
        assert view.errors() == []
    return found


def _inside(box: dict[str, float], width: float, height: float) -> bool:
    return (
        box["left"] >= 0 and box["top"] >= 0 and box["right"] <= width and box["bottom"] <= height
    )


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"] - 0.5
        and b["left"] < a["right"] - 0.5
        and a["top"] < b["bottom"] - 0.5
        and b["top"] < a["bottom"] - 0.5
    )


def check_figure(svg: Path, tmp: Path, series: list[str] | None) -> dict[str, Any]:
    """Each of ``series`` once in each panel's legend (None: whatever the legend holds),
    inside the picture; every value inside it and off every bar and whisker."""
    found = _boxes(svg, tmp)
    width, height = found["width"], found["height"]
    legend = [b["text"] for b in found["legend"]]
    if series is not None:
        panels = max(1, len(legend) // max(1, len(series)))
        assert sorted(legend) == sorted(series * panels), legend
    outside = [b for b in found["legend"] + found["values"] if not _inside(b, width, height)]
    assert outside == [], (outside, width, height)
    entries = found["legend"]
    crowded = [
        (a["text"], b["text"])
        for i, a in enumerate(entries)
        for b in entries[i + 1 :]
        if _overlap(a, b)
    ]
    assert crowded == [], crowded
    assert found["values"], "no value written at the bars"
    covered = [(v["text"], m) for v in found["values"] for m in found["marks"] if _overlap(v, m)]
    assert covered == [], covered[:3]
    return found


def test_molp2s_figure_holds_every_view_in_its_legend_and_values_off_the_whiskers(
    cli, tmp_path: Path
) -> None:
    """The sweep of issue 38: four views, two models; `structure_only` fell below the SVG's
    edge, and the 9 px values sat on the error bars."""
    chromium()
    sweep = tmp_path / "rpA"
    proc = cli(
        "-m",
        "task=molp2s/gap",
        f"view={','.join(VIEWS)}",
        "model=baseline,random",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = sweep / "report" / "figures"
    found = check_figure(figures / "molp2s_analysis.svg", tmp_path, VIEWS)
    assert len(found["legend"]) == 8  # a panel per model, each with its own legend
    check_figure(
        figures / "primary_molp2s.svg", tmp_path, ["baseline:molp2s_rdkit", "random(seed=0)"]
    )


def test_every_figure_of_the_other_families_reads_at_a_glance(
    families_sweep: Path, tmp_path: Path
) -> None:
    chromium()
    svgs = sorted((families_sweep / "report" / "figures").glob("*.svg"))
    assert {s.stem for s in svgs} >= {"cblue_analysis", "reaction_mc_analysis", "retrieval_gates"}
    for svg in svgs:
        check_figure(svg, tmp_path, None)


@pytest.mark.parametrize(
    ("n_series", "stem"),
    [(3, "series"), (5, "series"), (7, "series"), (5, "baseline:reaction_mc_nearest_reference")],
)
def test_legend_rows_stay_inside_whatever_the_number_of_series(
    n_series: int, stem: str, tmp_path: Path
) -> None:
    """pygal leaves room for n // columns legend rows and draws ceil(n / columns); long names
    take fewer columns."""
    chromium()
    from benchreg.core.figures import horizontal_bars, point, to_svg

    names = [f"{stem} {k}" for k in range(n_series)]
    bars = [(name, [point(0.95, (0.9, 1.0)), point(0.05, (0.0, 0.3))]) for name in names]
    chart = horizontal_bars("t", ["first row", "second row"], bars, value_range=(0.0, 1.0))
    svg = tmp_path / f"bars_{n_series}_{len(stem)}.svg"
    svg.write_text(to_svg(chart, f"bars-{n_series}-{len(stem)}"))
    check_figure(svg, tmp_path, names)


def test_long_values_of_negative_and_positive_bars_stay_in_the_picture(tmp_path: Path) -> None:
    chromium()
    from benchreg.core.figures import horizontal_bars, point, to_svg

    values = [
        point(0.224, (0.01, 0.44), text="+0.224 (n=4, p=0.25)"),
        point(-0.3, (-0.5, 0.1), text="-0.300 (n=40, p=0.0012)"),
    ]
    chart = horizontal_bars("t", ["a", "b"], [("difference", values)], legend=False)
    svg = tmp_path / "differences.svg"
    svg.write_text(to_svg(chart, "differences"))
    found = _boxes(svg, tmp_path)
    assert len(found["values"]) == 2
    assert all(_inside(b, found["width"], found["height"]) for b in found["values"])
    assert not [(v, m) for v in found["values"] for m in found["marks"] if _overlap(v, m)]
