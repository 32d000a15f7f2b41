"""Parser: model text -> one 0-based option index.

Steps (anything ambiguous raises ParseError, so the sample counts as invalid):
1. Drop reasoning: `<think>...</think>` / `<reasoning>...</reasoning>` blocks; when a closing tag
   has no opening tag, everything before the last closing tag.
2. A JSON object with one of the keys `answer`, `option`, `option_index`, `index`, `choice`.
3. Answer phrases, strongest first: `\\boxed{N}`; then "answer is N", "Answer: N", "final answer
   N", "答案：N", "最终答案 N"; then "选择 N", "choose / select / pick N" (each optionally with
   "option"). All phrases of the strongest kind found must name the same number.
4. Option mentions: "Option N", "选项 N", "option #N" — all must agree.
5. The whole reply is one integer (possibly in backticks, bold or with a final period).
Several different numbers at the deciding step, or no number at all, is a ParseError.
"""

from __future__ import annotations

import json
import re
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.types import Sample

_BLOCK_TAGS = ("think", "thinking", "reasoning", "thought")
_JSON_KEYS = ("answer", "option", "option_index", "index", "choice")
_INT = r"([-+]?\d+)"
_OPT = r"(?:option|choice|选项|選項)?\s*[#(（]?\s*"
_ANSWER_PATTERNS = (
    re.compile(r"\\boxed\{\s*(?:option\s*)?" + _INT + r"\s*\}", re.IGNORECASE),
    re.compile(
        r"(?:final\s+answer|answer|答案|最终答案|最終答案)\s*(?:is|:|：|=|为|是)?\s*"
        r"(?:\*\*)?\s*" + _OPT + _INT + r"(?!\.?\d)",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?:i\s+(?:would\s+)?(?:choose|select|pick)|(?:choose|select|pick)|选择|選擇)\s*"
        r"(?:\*\*)?\s*" + _OPT + _INT + r"(?!\.?\d)",
        re.IGNORECASE,
    ),
)
_OPTION_PATTERN = re.compile(r"(?:option|选项|選項)\s*[#(（]?\s*" + _INT + r"(?!\.?\d)", re.I)
_BARE = re.compile(r"^[\s*`\"'(\[]*" + _INT + r"[\s*`\"')\].。]*$")


def strip_reasoning(text: str) -> str:
    for tag in _BLOCK_TAGS:
        text = re.sub(rf"<{tag}>.*?</{tag}>", " ", text, flags=re.DOTALL | re.IGNORECASE)
        closing = list(re.finditer(rf"</{tag}>", text, flags=re.IGNORECASE))
        if closing:
            text = text[closing[-1].end() :]
        text = re.sub(rf"<{tag}>.*", " ", text, flags=re.DOTALL | re.IGNORECASE)
    return text.strip()


def _from_json(text: str) -> int | None:
    candidate = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        data: Any = json.loads(candidate)
    except (json.JSONDecodeError, ValueError):
        embedded = [_json_object(m) for m in re.findall(r"\{[^{}]*\}", text)]
        return _agreeing([n for n in embedded if n is not None], "JSON objects")
    if isinstance(data, dict):
        for key in _JSON_KEYS:
            value = data.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
                return int(value)
        raise ParseError(f"JSON reply without an integer {'/'.join(_JSON_KEYS)} key")
    if isinstance(data, int) and not isinstance(data, bool):
        return data
    return None


def _json_object(snippet: str) -> int | None:
    try:
        data = json.loads(snippet)
    except (json.JSONDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    for key in _JSON_KEYS:
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _agreeing(numbers: list[int], what: str) -> int | None:
    distinct = sorted(set(numbers))
    if len(distinct) > 1:
        raise ParseError(f"{what} name different options: {distinct}")
    return distinct[0] if distinct else None


def parse_option_index(text: str) -> int:
    body = strip_reasoning(text)
    if not body:
        raise ParseError("empty reply (after removing reasoning)")
    from_json = _from_json(body)
    if from_json is not None:
        return from_json
    for pattern in _ANSWER_PATTERNS:
        found = _agreeing([int(m) for m in pattern.findall(body)], "answer phrases")
        if found is not None:
            return found
    found = _agreeing([int(m) for m in _OPTION_PATTERN.findall(body)], "option mentions")
    if found is not None:
        return found
    bare = _BARE.match(body)
    if bare:
        return int(bare.group(1))
    raise ParseError("no option index found")


@registry.parsers.register("reaction_mc_option_index")
def parse(text: str, sample: Sample, **params: Any) -> int:
    return parse_option_index(text)
