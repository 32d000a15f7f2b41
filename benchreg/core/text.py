"""Text helpers for parsers and prompts: reasoning removal, JSON extraction, template filling."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

REASONING_TAGS = ("think", "thinking", "reasoning", "thought")
_BLOCKS = [
    (
        re.compile(rf"<{tag}>.*?</{tag}>", re.DOTALL | re.IGNORECASE),
        re.compile(rf"</{tag}>", re.IGNORECASE),
        re.compile(rf"<{tag}>.*", re.DOTALL | re.IGNORECASE),
    )
    for tag in REASONING_TAGS
]


def strip_reasoning(text: str) -> str:
    """Drop reasoning blocks (`<think>...</think>` and the like). A closing tag without its
    opening tag drops everything before it; an opening tag never closed drops the rest."""
    for block, closing, unclosed in _BLOCKS:
        text = block.sub(" ", text)
        ends = list(closing.finditer(text))
        if ends:
            text = text[ends[-1].end() :]
        text = unclosed.sub(" ", text)
    return text.strip()


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object embedded in ``text``, in order; nested objects stay inside
    their parent, and code fences or prose around them are ignored."""
    decoder = json.JSONDecoder()
    found, pos = [], 0
    while (start := text.find("{", pos)) != -1:
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            pos = start + 1
            continue
        if isinstance(obj, dict):
            found.append(obj)
        pos = end
    return found


def last_object_with(text: str, key: str) -> dict[str, Any] | None:
    """The last embedded JSON object that has ``key`` (reasoning blocks removed first)."""
    objects = [o for o in json_objects(strip_reasoning(text)) if key in o]
    return objects[-1] if objects else None


def fill_template(template: str, values: Mapping[str, str]) -> tuple[str, bool]:
    """Replace ``{{ name }}`` and ``{name}`` for the names in ``values``; other braces (JSON
    examples in a prompt) are left alone. Returns the text and whether any placeholder was used."""
    if not values:
        return template, False
    names = "|".join(re.escape(name) for name in sorted(values, key=len, reverse=True))
    pattern = re.compile(r"\{\{\s*(" + names + r")\s*\}\}|\{(" + names + r")\}")
    used = False

    def replace(match: re.Match[str]) -> str:
        nonlocal used
        used = True
        return values[match.group(1) or match.group(2)]

    return pattern.sub(replace, template), used
