"""Condition groups: merging and comparing them (normalised text, order-free item lists)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Signature = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


def _norm(text: Any) -> str:
    # split/join: the same whitespace set as the regex \s+ on str, several times faster
    return " ".join(str(text if text is not None else "").split()).lower()


def _items(value: Any) -> tuple[tuple[str, str], ...]:
    values = value if isinstance(value, list) else [value]
    items = []
    for item in values:
        if isinstance(item, Mapping):
            pair = (_norm(item.get("content")), str(item.get("SMILES") or "").strip())
        else:
            pair = (_norm(item), "")
        if pair != ("", ""):
            items.append(pair)
    return tuple(sorted(items))


def condition_signature(conditions: Mapping[str, Any]) -> Signature:
    """A hashable, normalised form: keys with no items count as absent."""
    pairs = ((key, _items(value)) for key, value in conditions.items())
    return tuple(sorted((key, items) for key, items in pairs if items))


def merged(*groups: Mapping[str, Any] | None) -> dict[str, Any]:
    """Later groups win on shared keys."""
    out: dict[str, Any] = {}
    for group in groups:
        out.update(group or {})
    return out
