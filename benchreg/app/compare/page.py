"""The comparison's files: compare.md, compare.json, compare.html and compare.svg (with pygal),
laid out in memory, then written together."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchreg.app.compare.render import (
    A_BETTER,
    B_BETTER,
    COLOURS,
    GATE_HEADER,
    HEADER,
    direction,
    gate_lines,
    gate_rows,
    headline,
    method,
    summary_line,
    table_rows,
)
from benchreg.app.compare.results import Comparison
from benchreg.core.errors import BenchregError
from benchreg.core.io import atomic_write_text, dumps

# the headline's green and red for the "significant" cell of the every-task table as well
TONE_CSS = (
    "<style>td.pass { background: #e3f4e1; color: #1d5e1d; font-weight: 600; } "
    "td.fail { background: #fde2e1; }</style>"
)


def _gate_markdown(result: Comparison) -> list[str]:
    from benchreg.app.report.html import markdown_table

    if result.gate is None:
        return []
    gate = result.gate
    lines = ["", "## Release gate", "", *(f"**{line}**" for line in gate_lines(gate)[:1])]
    lines += ["", *(f"- {line}" for line in gate_lines(gate)[1:]), "", gate.method, ""]
    return [*lines, markdown_table(GATE_HEADER, gate_rows(gate))]


def markdown(result: Comparison) -> str:
    from benchreg.app.report import headline as headline_view
    from benchreg.app.report.html import markdown_table

    lines = [
        "# benchreg compare",
        "",
        f"- A: `{result.a}`",
        f"- B: `{result.b}`",
        "",
        f"**{summary_line(result)}**",
        "",
        headline_view.markdown(headline(result), level=2),
        *_gate_markdown(result),
        "",
        "## Every task",
        "",
        method(result),
        "",
        markdown_table(HEADER, table_rows(result)),
    ]
    lines += ["", *(f"- {n}" for n in result.notes)] if result.notes else []
    return "\n".join(lines) + "\n"


def toned_table(header: list[str], rows: list[list[str]], tones: list[str | None]) -> str:
    """An HTML table whose "significant" cell carries its row's tone (A better / B better)."""
    from benchreg.app.report.html import esc

    toned = header.index("significant")
    out = ['<table class="wide">', "<thead><tr>", *(f"<th>{esc(h)}</th>" for h in header)]
    out += ["</tr></thead>", "<tbody>"]
    for row, tone in zip(rows, tones, strict=True):
        cells = [
            f'<td class="{tone}">{esc(c)}</td>' if i == toned and tone else f"<td>{esc(c)}</td>"
            for i, c in enumerate(row)
        ]
        out.append(f"<tr>{''.join(cells)}</tr>")
    return "\n".join([*out, "</tbody>", "</table>"])


def figure(result: Comparison) -> str | None:
    """A - B per task with its CI, coloured as the headline: green A better, red B better,
    grey not significant."""
    from benchreg.core.figures import FAIL, NA, PASS, finite, horizontal_bars, point, to_svg

    colour = {A_BETTER: PASS, B_BETTER: FAIL, None: NA}
    rows = [r for r in result.rows if finite(r.difference)]
    if not rows:
        return None
    values = [
        point(r.difference, r.ci95, text=f"{r.difference:+.3f}", color=colour[direction(r)])
        for r in rows
        if r.difference is not None
    ]
    chart = horizontal_bars(
        "A - B per task (95% paired bootstrap CI; green: A better, red: B better, "
        "grey: no significant difference after Holm)",
        [r.label for r in rows],
        [("difference", values)],
        x_title="difference of the primary metric (A - B; the value beside each point)",
        legend=False,
    )
    return to_svg(chart, "differences")


def _figure_parts(result: Comparison, files: dict[str, str]) -> list[str]:
    from benchreg.app.report import INSTALL_HINT, html

    try:
        svg = figure(result)
    except ImportError:
        return [
            f'<p class="note">pygal is not installed: no figure. Install it with '
            f"{html.esc(INSTALL_HINT)}</p>"
        ]
    if not svg:
        return []
    files["compare.svg"] = svg
    return ["<h2>Figure</h2>", html.figure(svg, "Paired difference A - B per task", "compare")]


def _gate_html(result: Comparison) -> list[str]:
    from benchreg.app.report import html

    if result.gate is None:
        return []
    first, *rest = gate_lines(result.gate)
    return [
        "<h2>Release gate</h2>",
        f"<p class=states><strong>{html.esc(first)}</strong></p>",
        "<ul>" + "".join(f"<li>{html.esc(line)}</li>" for line in rest) + "</ul>",
        f"<p class=small>{html.esc(result.gate.method)}</p>",
        html.table(GATE_HEADER, gate_rows(result.gate), cls="wide"),
    ]


def render_comparison(result: Comparison) -> dict[str, str]:
    """File name -> text of every output of a comparison (compare.svg only with pygal):
    the page leads with the significant differences, then the gate, the figure, every task."""
    from benchreg.app.report import headline as headline_view
    from benchreg.app.report import html

    files = {"compare.md": markdown(result), "compare.json": dumps(asdict(result))}
    parts = [
        TONE_CSS,
        f"<p class=small>A: <code>{html.esc(result.a)}</code><br>"
        f"B: <code>{html.esc(result.b)}</code></p>",
        f"<p class=states><strong>{html.esc(summary_line(result))}</strong></p>",
        headline_view.to_html(headline(result), "compare"),
        *_gate_html(result),
        *_figure_parts(result, files),
        "<h2>Every task</h2>",
        f"<p class=small>{html.esc(method(result))} {html.esc(COLOURS)}</p>",
        toned_table(HEADER, table_rows(result), [direction(r) for r in result.rows]),
        *(f"<p class=small>{html.esc(n)}</p>" for n in result.notes),
    ]
    files["compare.html"] = html.page("benchreg compare", parts)
    return files


def write_comparison(result: Comparison, out: Path) -> list[Path]:
    """Lay every output out in memory, then write them to ``out``."""
    files = render_comparison(result)
    if out.exists() and not out.is_dir():
        raise BenchregError(
            "a file where the comparison folder belongs", where=out, fix="pass --out DIR"
        )
    order = ["compare.md", "compare.json", "compare.html", "compare.svg"]
    written = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name in (n for n in order if n in files):
            atomic_write_text(out / name, files[name])
            written.append(out / name)
    except OSError as exc:
        raise BenchregError(
            f"cannot write the comparison ({exc.strerror or type(exc).__name__})",
            where=exc.filename or out,
            fix="pass --out DIR, a folder you can write",
        ) from None
    return written


def as_dict(result: Comparison) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(result)))
