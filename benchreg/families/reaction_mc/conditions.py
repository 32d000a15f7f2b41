"""Condition groups: merging and comparing them (normalised text, order-free item lists)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

Signature = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


@lru_cache(maxsize=1 << 16)  # condition texts repeat across the options of a release
def _norm_text(text: str) -> str:
    # split/join: the same whitespace set as the regex \s+ on str, several times faster
    return " ".join(text.split()).lower()


def _norm(text: Any) -> str:
    return _norm_text(text if type(text) is str else str(text if text is not None else ""))


def _items(value: Any) -> tuple[tuple[str, str], ...]:
    values = value if isinstance(value, list) else [value]
    items = []
    for item in values:
        if type(item) is dict or isinstance(item, Mapping):
            content, smiles = item.get("content"), item.get("SMILES")
            pair = (
                _norm_text(content) if type(content) is str else _norm(content),
                smiles.strip() if type(smiles) is str else str(smiles or "").strip(),
            )
        else:
            pair = (_norm(item), "")
        if pair != ("", ""):
            items.append(pair)
    return tuple(sorted(items)) if len(items) > 1 else tuple(items)


def condition_signature(conditions: Mapping[str, Any]) -> Signature:
    """A hashable, normalised form: keys with no items count as absent."""
    if len(conditions) == 1:  # an option of a single_varying question
        for key, value in conditions.items():
            items = _items(value)
            return ((key, items),) if items else ()
    pairs = ((key, _items(value)) for key, value in conditions.items())
    return tuple(sorted((key, items) for key, items in pairs if items))


def merged(*groups: Mapping[str, Any] | None) -> dict[str, Any]:
    """Later groups win on shared keys."""
    out: dict[str, Any] = {}
    for group in groups:
        out.update(group or {})
    return out
