"""MolP2S's part of a sweep report: the property x view accuracy matrix with the use-claim verdict
per property (the headline), and accuracy by view per property (the figure), both from
`analysis_molp2s_views.json` (``families/molp2s/analysis.py``). Verdict strings are shown as the
analysis words them; the colour of a verdict comes from its tests' outcomes, never its wording."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchreg.core import registry
from benchreg.core.reporting import Cell, Headline, ReportInput, ReportPart, analysis_figure

ANALYSIS = "molp2s_views"
VIEW_ORDER = ("correct", "shuffled", "counterfactual", "structure_only")
TESTS = ("shuffle_drop", "donor_flip")  # the two tests of a use claim
SHORT = {
    "supported": "SUPPORTED",
    "not supported": "not supported",
    "not testable": "not testable",
    # a bundle's verdict is about the bundle, never a use claim
    "bundle: both tests pass": "bundle: both pass",
    "bundle: a test fails": "bundle: a test fails",
    "bundle: not testable": "bundle: not testable",
}


def _short(claim: Mapping[str, Any]) -> str:
    """The verdict under a property's bars (SUPPORTED only for a one-property use claim)."""
    return SHORT.get(str(claim.get("verdict") or ""), "n/a")


def _views(models: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The views the analysis holds, in the spec's order (others after it)."""
    found = {v for tasks in models.values() for c in tasks.values() for v in c.get("views") or {}}
    return [v for v in VIEW_ORDER if v in found] + sorted(found - set(VIEW_ORDER))


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


NBSP = "\u00a0"  # keeps a CI on one line when a narrow terminal wraps the cell


def _accuracy(cell: Mapping[str, Any] | None) -> str:
    if not cell or _number(cell.get("accuracy")) is None:
        return "-"
    ci = cell.get("ci95") or []
    if len(ci) == 2 and all(_number(c) is not None for c in ci):
        return f"{cell['accuracy']:.2f} [{ci[0]:.2f},{NBSP}{ci[1]:.2f}]"
    return f"{cell['accuracy']:.2f}"


def _p(test: Mapping[str, Any]) -> str:
    p = _number(test.get("p_one_sided"))
    return "" if p is None else f"p={p:.2g}"


def _outcome(test: Mapping[str, Any]) -> str:
    return {True: "pass", False: "fail"}.get(test.get("passed"), "not run")


def _missing(test: Mapping[str, Any]) -> str:
    views = test.get("missing_views") or []
    return f"not run: needs {', '.join(views)}" if views else "not run"


def _test(mark: str, test: Mapping[str, Any]) -> str:
    """`(a) pass p=0.00049 n=16`: the outcome, one-sided p and pairs of one test."""
    if test.get("passed") is None:
        return f"{mark} {_missing(test)}"
    return f"{mark} {_outcome(test)} {_p(test)} n={test.get('n_pairs')}"


def _tests(tests: Mapping[str, Any]) -> str:
    """Both tests of the use claim, one a line."""
    return "\n".join(
        (
            _test("(a)", tests.get("shuffle_drop") or {}),
            _test("(b)", tests.get("donor_flip") or {}),
        )
    )


def _verdict(claim: Mapping[str, Any]) -> Cell:
    """The verdict as the analysis words it; green when both tests passed, red when one was run
    and failed."""
    tests = claim.get("tests") or {}
    outcomes = [(tests.get(t) or {}).get("passed") for t in TESTS]
    tone = "pass" if outcomes == [True, True] else "fail" if False in outcomes else None
    return Cell(str(claim.get("verdict") or "n/a"), tone)


def headline(data: ReportInput) -> Headline | None:
    """Per model and property: accuracy per view with its Wilson 95% CI, the verdict, and the
    two tests of the use claim with their n and one-sided p."""
    analysis = data.analysis(ANALYSIS)
    if analysis is None:
        return None
    models = {m: t for m, t in (analysis.get("models") or {}).items() if isinstance(t, dict) and t}
    if not models:
        return None
    views = _views(models)
    several = len(models) > 1
    columns = [
        *(["model"] if several else []),
        "property",
        *views,
        "use-claim verdict",
        "tests: (a) shuffle drop, (b) donor flip",
    ]
    rows: list[list[Any]] = []
    claims: list[Mapping[str, Any]] = []
    for model in sorted(models):
        for task in sorted(models[model]):
            claim = models[model][task]
            tests = claim.get("tests") or {}
            claims.append(claim)
            rows.append(
                [
                    *([model] if several else []),
                    task.split("/")[-1],
                    *(_accuracy((claim.get("views") or {}).get(v)) for v in views),
                    _verdict(claim),
                    _tests(tests),
                ]
            )
    alpha = analysis.get("alpha", 0.05)
    title = "MolP2S: accuracy by view and the use-claim verdict per property"
    if not several:
        title += f" ({next(iter(models))})"
    footnotes = [
        "Cells: accuracy [Wilson 95% CI] of each view's job.",
        f"A use claim is supported when (a) the shuffle drop (correct vs shuffled, paired on "
        f"record) and (b) the donor-directed flip (counterfactual vs structure_only, paired) both "
        f"pass: one-sided exact McNemar, p < {alpha}; n = the record pairs each test used. A "
        "bundle's verdict is about the bundle as a whole.",
        f"The full rule and the donor rate against chance: analysis_{ANALYSIS}.md.",
    ]
    terminal = _terminal(Headline(title, columns, rows, footnotes), claims)
    return Headline(title, columns, rows, footnotes, terminal=terminal)


def _testable(claim: Mapping[str, Any]) -> bool:
    tests = claim.get("tests") or {}
    return any((tests.get(t) or {}).get("passed") is not None for t in TESTS)


def _needed_views(claims: list[Mapping[str, Any]]) -> list[str]:
    """The views the claims' tests lack, in the spec's order."""
    found = {
        str(view)
        for claim in claims
        for test in (claim.get("tests") or {}).values()
        if isinstance(test, Mapping)
        for view in test.get("missing_views") or []
    }
    return [v for v in VIEW_ORDER if v in found] + sorted(found - set(VIEW_ORDER))


def _terminal(full: Headline, claims: list[Mapping[str, Any]]) -> Headline | None:
    """The terminal's form: the rows whose use claim can be tested, and one line for all those
    that cannot (None when every row can be tested)."""
    untestable = [i for i, claim in enumerate(claims) if not _testable(claim)]
    if not untestable:
        return None
    needs = _needed_views([claims[i] for i in untestable])
    share = (
        f"all {len(claims)} rows"
        if len(untestable) == len(claims)
        else f"{len(untestable)} of {len(claims)} rows"
    )
    line = f"use-claim verdict: not testable for {share}" + (
        f" (needs views {', '.join(needs)})" if needs else ""
    )
    skipped = set(untestable)
    kept = [row for i, row in enumerate(full.rows) if i not in skipped]
    footnotes = [line, "Every row, with its accuracy per view: report/index.html."]
    if not kept:
        return Headline(full.title, full.columns, [], footnotes)
    return Headline(full.title, full.columns, kept, [*full.footnotes, *footnotes])


def molp2s_views(analysis: Mapping[str, Any]) -> str | None:
    """Accuracy per property (Wilson 95% CI), a bar per view in each property's row and one panel
    per model: horizontal bars with the value at each bar, the property names (with the verdict)
    readable on the left."""
    from benchreg.core.figures import finite, horizontal_bars, point, stack

    models = analysis.get("models") or {}
    panels = [(model, tasks) for model, tasks in models.items() if tasks]
    if not panels:
        return None
    views = _views(dict(panels))
    charts = []
    for p, (model, tasks) in enumerate(panels):
        props = sorted(tasks)
        labels = [f"{prop.split('/')[-1]} ({_short(tasks[prop])})" for prop in props]
        series = []
        for view in views:
            values = []
            for prop in props:
                cell = (tasks[prop].get("views") or {}).get(view)
                ok = cell and finite(cell.get("accuracy"))
                values.append(point(cell["accuracy"], cell.get("ci95")) if ok else None)
            series.append((view, values))
        title = "MolP2S accuracy by view (Wilson 95% CI), use-claim verdict beside each property"
        chart = horizontal_bars(
            f"{title}: {model}",
            labels,
            series,
            x_title="accuracy",
            value_range=(0.0, 1.0),
            digits=2,
        )
        charts.append((chart, f"molp2s-{p}"))
    return stack(charts)


CAPTION = (
    "MolP2S accuracy per property, a bar per view (Wilson 95% CI; the value at each bar), "
    "with the use-claim verdict beside each property (analysis_molp2s_views.json)"
)
figures = analysis_figure(ANALYSIS, "molp2s_analysis", molp2s_views, CAPTION)
registry.report_parts.add("molp2s", ReportPart(figures=figures, headline=headline))
