"""A self-contained HTML page: inline CSS, figures embedded as data URIs, no script, no network.
Tables wrap long cells at word breaks (a job name or an error message anywhere) so that they fit
the page's width."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from typing import Any

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 78rem; padding: 0 1rem; color: #1b1b1b; }
h1 { font-size: 1.6rem; }
h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .78rem; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
th { background: #f3f3f3; }
tr.bad td { background: #fde2e1; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.counts td:first-child, table.counts td:last-child { overflow-wrap: anywhere; }
table.wide { font-size: .72rem; }
table.wide td { padding: .2rem .35rem; }
section.headline { margin: 1.2rem 0 1.8rem; }
section.headline h2 { margin-top: 1.4rem; }
table.headline { font-size: .82rem; }
table.headline td.pass { background: #e3f4e1; color: #1d5e1d; font-weight: 600; }
table.headline td.fail { background: #fde2e1; }
ul.footnotes { font-size: .8rem; color: #444; margin: .2rem 0; padding-left: 1.2rem; }
nav.links { margin: .6rem 0 1rem; font-size: .9rem; }
a.button { display: inline-block; padding: .3rem .8rem; background: #1f5fa8; color: #fff;
           border-radius: .3rem; text-decoration: none; }
p.states { font-size: 1.05rem; }
figure { margin: 1rem 0 2rem; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .85rem; color: #444; margin-top: .3rem; }
.note { background: #fff6d6; border: 1px solid #e8d48a; padding: .5rem .8rem; }
.small { font-size: .8rem; color: #555; }
code { background: #f4f4f4; padding: 0 .2rem; }
"""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def prose(value: Any) -> str:
    """Escaped text whose `backticked` names (as in the markdown files) show as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(value))


def fmt(value: Any, digits: int = 4) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return "" if value is None else str(value)


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    bad: Sequence[bool] | None = None,
    cls: str | None = None,
) -> str:
    opening = f'<table class="{esc(cls)}">' if cls else "<table>"
    out = [opening, "<thead><tr>", *(f"<th>{esc(h)}</th>" for h in header), "</tr></thead>"]
    out.append("<tbody>")
    for i, row in enumerate(rows):
        cls = ' class="bad"' if bad is not None and bad[i] else ""
        cells = []
        for cell in row:
            num = isinstance(cell, int | float) and not isinstance(cell, bool)
            cells.append(f"<td{' class=num' if num else ''}>{esc(fmt(cell))}</td>")
        out.append(f"<tr{cls}>{''.join(cells)}</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out)


def figure(svg: str, caption: str, name: str) -> str:
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (
        f'<figure id="fig-{esc(name)}"><img class="figure" alt="{esc(caption)}" '
        f'src="data:image/svg+xml;base64,{data}">'
        f"<figcaption>{esc(caption)} <span class=small>(file: figures/{esc(name)}.svg)</span>"
        "</figcaption></figure>"
    )


def page(title: str, parts: Sequence[str]) -> str:
    body = "\n".join(parts)
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n"
        f"<body>\n<h1>{esc(title)}</h1>\n{body}\n</body></html>\n"
    )


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        return fmt(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
