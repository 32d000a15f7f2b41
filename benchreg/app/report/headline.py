"""A family's headline table (:class:`benchreg.core.reporting.Headline`) as terminal text,
markdown and HTML. Layout only: what the cells say is the family's."""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Sequence

from benchreg.app.report import html
from benchreg.core.reporting import Cell, CellValue, Headline

MIN_COLUMN = 8  # a column is never wrapped narrower than this (or its longest word, if shorter)
MAX_WORD = 24  # nor narrower than its longest word, up to this many characters
DEFAULT_WIDTH = 120  # when the terminal's width is unknown (output piped to a file)


def cell_text(value: CellValue) -> str:
    if isinstance(value, Cell):
        return value.text
    return html.fmt(value)


def tone(value: CellValue) -> str | None:
    return value.tone if isinstance(value, Cell) else None


def terminal_width() -> int:
    return max(60, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def text(headline: Headline, width: int | None = None) -> str:
    """The table fitted into ``width`` columns (the terminal's): the widest columns are wrapped
    first; the title and footnotes are wrapped too. The headline's ``terminal`` form when it has
    one."""
    width = width or terminal_width()
    headline = headline.terminal or headline
    if not headline.rows:
        lines = textwrap.wrap(headline.title, width) or [""]
        lines.append("=" * min(width, max(len(line) for line in lines)))
        for note in headline.footnotes:
            lines += textwrap.wrap(note, width, initial_indent="  ", subsequent_indent="  ")
        return "\n".join(lines)
    header = [str(c) for c in headline.columns]
    rows = [[cell_text(c) for c in row] for row in headline.rows]
    widths = _fit([header, *rows], width)
    lines = textwrap.wrap(headline.title, width) or [""]
    lines.append("=" * min(width, max(len(line) for line in lines)))
    lines += _wrapped_row(header, widths)
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines += _wrapped_row(row, widths)
    for note in headline.footnotes:
        lines += textwrap.wrap(note, width, initial_indent="  ", subsequent_indent="  ")
    return "\n".join(line.rstrip() for line in lines)


def _fit(table: list[list[str]], width: int) -> list[int]:
    """Column widths: natural, then one character at a time off the column whose narrowing
    adds the fewest lines to the table (ties: the one with most room), until the row fits;
    never below a column's longest word (capped at MAX_WORD) or MIN_COLUMN."""
    columns = range(len(table[0]))
    natural = [max(len(line) for r in table for line in r[i].splitlines() or [""]) for i in columns]
    longest = [max((len(w) for r in table for w in _words(r[i])), default=0) for i in columns]
    floor = [
        min(n, max(MIN_COLUMN, min(w, MAX_WORD))) for n, w in zip(natural, longest, strict=True)
    ]
    cache: dict[tuple[int, int], list[int]] = {}

    def lines(i: int, w: int) -> list[int]:
        if (i, w) not in cache:
            cache[(i, w)] = [len(_wrap(r[i], w)) for r in table]
        return cache[(i, w)]

    def height(widths: list[int]) -> int:
        per_column = [lines(i, w) for i, w in enumerate(widths)]
        return sum(max(col[r] for col in per_column) for r in range(len(table)))

    widths = list(natural)
    budget = width - 2 * (len(widths) - 1)
    while sum(widths) > budget:
        choices = [i for i in columns if widths[i] > floor[i]]
        if not choices:
            break  # nothing left to wrap: the table is wider than the terminal

        def cost(i: int) -> tuple[int, int]:
            trial = [w - 1 if j == i else w for j, w in enumerate(widths)]
            return (height(trial), -(widths[i] - floor[i]))

        widths[min(choices, key=cost)] -= 1
    return widths


def _wrap(cell: str, width: int) -> list[str]:
    parts: list[str] = []
    for line in cell.splitlines() or [""]:
        parts += textwrap.wrap(line, width, break_on_hyphens=False) or [""]
    return parts


def _words(cell: str) -> list[str]:
    """The chunks textwrap breaks a cell into: split at ASCII white space only (a no-break space
    keeps `[0.14,\u00a00.56]` together)."""
    return [w for w in re.split(r"[ \t\n\r]+", cell) if w]


def _wrapped_row(cells: Sequence[str], widths: Sequence[int]) -> list[str]:
    wrapped = [_wrap(cell, w) for cell, w in zip(cells, widths, strict=True)]
    height = max(len(p) for p in wrapped)
    return [
        "  ".join(
            (p[i] if i < len(p) else "").ljust(w) for p, w in zip(wrapped, widths, strict=True)
        )
        for i in range(height)
    ]


def markdown(headline: Headline, level: int = 2) -> str:
    def cell(value: CellValue) -> str:
        shown = cell_text(value).replace("|", "\\|").replace("\n", "<br>")
        return f"**{shown}**" if tone(value) == "pass" and shown else shown

    lines = [f"{'#' * level} {headline.title}", ""]
    if not headline.rows:
        return "\n".join([*lines, *(f"- {note}" for note in headline.footnotes)])
    lines.append("| " + " | ".join(str(c) for c in headline.columns) + " |")
    lines.append("|" + "---|" * len(headline.columns))
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in headline.rows]
    if headline.footnotes:
        lines += ["", *(f"- {note}" for note in headline.footnotes)]
    return "\n".join(lines)


def to_html(headline: Headline, anchor: str) -> str:
    if not headline.rows:
        notes = "".join(f"<li>{html.prose(note)}</li>" for note in headline.footnotes)
        return (
            f'<section class="headline" id="headline-{html.esc(anchor)}">'
            f"<h2>{html.esc(headline.title)}</h2>"
            f'<ul class="footnotes">{notes}</ul></section>'
        )
    out = [
        f'<section class="headline" id="headline-{html.esc(anchor)}">',
        f"<h2>{html.esc(headline.title)}</h2>",
        '<table class="headline"><thead><tr>',
        *(f"<th>{html.esc(c)}</th>" for c in headline.columns),
        "</tr></thead><tbody>",
    ]
    for row in headline.rows:
        cells = []
        for value in row:
            classes = [c for c in (tone(value),) if c]
            if isinstance(value, int | float) and not isinstance(value, bool):
                classes.append("num")
            cls = f' class="{" ".join(classes)}"' if classes else ""
            shown = html.esc(cell_text(value)).replace("\n", "<br>")
            cells.append(f"<td{cls}>{shown}</td>")
        out.append(f"<tr>{''.join(cells)}</tr>")
    out.append("</tbody></table>")
    if headline.footnotes:
        out.append('<ul class="footnotes">')
        out += [f"<li>{html.prose(note)}</li>" for note in headline.footnotes]
        out.append("</ul>")
    out.append("</section>")
    return "\n".join(out)
