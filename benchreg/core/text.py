"""Text helpers for parsers and prompts: reasoning removal, JSON extraction, template filling."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

REASONING_TAGS = ("think", "thinking", "reasoning", "thought")
_BLOCKS = [
    (
        re.compile(rf"<{tag}>(.*?)</{tag}>", re.DOTALL | re.IGNORECASE),
        re.compile(rf"</{tag}>", re.IGNORECASE),
        re.compile(rf"<{tag}>(.*)", re.DOTALL | re.IGNORECASE),
    )
    for tag in REASONING_TAGS
]


@dataclass(frozen=True, slots=True)
class Reasoning:
    """A reply split into its answer text and its reasoning (None: the reply has none).
    ``unclosed``: a reasoning block was opened and never closed (the reply stopped inside it,
    e.g. at the token limit), so no answer follows it."""

    answer: str
    reasoning: str | None = None
    unclosed: bool = False


def split_reasoning(text: str) -> Reasoning:
    """The one reasoning helper every family's parser uses: `<think>...</think>` blocks (and
    `<thinking>`, `<reasoning>`, `<thought>`) taken out of the reply. A closing tag without its
    opening tag (a server that put the opening tag into the prompt) takes everything before
    it; an opening tag never closed takes the rest."""
    if "<" not in text:  # no tag of any kind: the common reply, answered without regexes
        return Reasoning(text.strip(), None, False)
    found: list[str] = []
    unclosed = False
    for block, closing, opened in _BLOCKS:
        found += [m.group(1).strip() for m in block.finditer(text)]
        text = block.sub(" ", text)
        ends = list(closing.finditer(text))
        if ends:
            found.append(text[: ends[0].start()].strip())
            text = text[ends[-1].end() :]
        rest = opened.search(text)
        if rest is not None:
            found.append(rest.group(1).strip())
            unclosed = True
            text = text[: rest.start()]
    reasoning = "\n\n".join(part for part in found if part) or (
        "" if unclosed or found else None
    )
    return Reasoning(text.strip(), reasoning, unclosed)


def strip_reasoning(text: str) -> str:
    """The reply without its reasoning blocks (:func:`split_reasoning`)."""
    return split_reasoning(text).answer


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
    pattern = _placeholders(tuple(values))
    used = False

    def replace(match: re.Match[str]) -> str:
        nonlocal used
        used = True
        return values[match.group(1) or match.group(2)]

    return pattern.sub(replace, template), used


@lru_cache(maxsize=64)
def _placeholders(names: tuple[str, ...]) -> re.Pattern[str]:
    """The pattern of these placeholder names, made once (a renderer fills the same names in
    every sample's prompt)."""
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(r"\{\{\s*(" + alternatives + r")\s*\}\}|\{(" + alternatives + r")\}")
