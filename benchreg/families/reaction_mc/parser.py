"""Parser: model text -> one 0-based option index.

Steps (anything ambiguous raises ParseError, so the sample counts as invalid):
1. Drop reasoning (:func:`benchreg.core.text.strip_reasoning`): `<think>...</think>` and the
   like; when a closing tag has no opening tag, everything before the last closing tag.
2. The JSON objects in the reply (:func:`benchreg.core.text.json_objects`; nested objects stay
   inside their parent) with one of the keys `answer`, `option`, `option_index`, `index`,
   `choice` holding an integer; all such objects must agree. A reply that is a single JSON object
   without such a key is a ParseError.
3. Answer phrases, strongest first: `\\boxed{N}`; then "answer is N", "Answer: N", "final answer
   N", "答案：N", "最终答案 N"; then "选择 N", "choose / select / pick N" (each optionally with
   "option"). All phrases of the strongest kind found must name the same number.
4. Option mentions: "Option N", "选项 N", "option #N" — all must agree.
5. The whole reply is one integer (possibly in backticks, bold or with a final period).
Several different numbers at the deciding step, or no number at all, is a ParseError.

A list of numbers is not an option index (steps 3 and 4): a number that runs on into a list
(`Answer: 1, 2, 3`, `answer 1 or 2`, `选项 2、3`, `option 1-3`) or a mention that heads a list
of numbers (`Option 0: 1, 2, 3, ... 121`) names no option. When every phrase of the deciding kind
is such a list, the reply is a ParseError (invalid), not a read of its first number.

The spec asks the model to output only the 0-based option number (section 3.1). A reply that is
only the integer (step 5; code ticks, bold or a final period tolerated) or only one JSON object
holding it (step 2) is read as asked; an index found in prose (a JSON object inside other text,
steps 3 and 4) is returned as :class:`Degraded`, so the sample is flagged `degraded` (scored as
given). No option is matched by its text (no fuzzy matching of condition names).
"""

from __future__ import annotations

import json
import re
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.text import json_objects, strip_reasoning
from benchreg.core.types import Degraded, Sample

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
_PHRASE_KINDS = ("\\boxed{N}", "an answer phrase", "a choose/select phrase")
_OPTION_PATTERN = re.compile(r"(?:option|选项|選項)\s*[#(（]?\s*" + _INT + r"(?!\.?\d)", re.I)
# A list of numbers: a separator on the same line, then another number (a bare integer, not
# `85%` or `2.5`); a line break alone separates nothing (`Answer: 2\n1. The yield ...`).
_LIST_SEP = (
    r"(?:[ \t]*(?:[,，、;；/|~～]|\.{2,}|…+|[-–—]|\b(?:to|or|and)\b|或|和|至|到)\s*|[ \t]+)"
)
_RUNS_ON = re.compile(_LIST_SEP + r"[-+]?\d+(?!\.?\d|%)", re.IGNORECASE)
_NUMBER = r"[-+]?\d+(?:\.\d+)?%?"
_HEADS_A_LIST = re.compile(
    r"\s*[:：=]\s*" + _NUMBER + _LIST_SEP + _NUMBER + _LIST_SEP + _NUMBER, re.IGNORECASE
)
_INT_TEXT = re.compile(r"\s*[-+]?\d+\s*")
_FENCE = re.compile(r"^```(?:json)?|```$", re.IGNORECASE)
_BARE = re.compile(r"^[\s*`\"'(\[]*" + _INT + r"[\s*`\"')\].。]*$")


def _index_in(obj: dict[str, Any]) -> int | None:
    """The first of the answer keys holding an integer (or an integer string)."""
    for key in _JSON_KEYS:
        value = obj.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and _INT_TEXT.fullmatch(value):
            return int(value)
    return None


def _whole_reply_is_json(body: str) -> bool:
    """The reply is one JSON value (maybe in a code fence), not prose around one."""
    candidate = _FENCE.sub("", body).strip()
    try:
        json.loads(candidate)
    except ValueError:
        return False
    return True


def _from_json(body: str) -> int | None:
    objects = json_objects(body)
    found = _agreeing([i for i in map(_index_in, objects) if i is not None], "JSON objects")
    if found is None and len(objects) == 1 and _whole_reply_is_json(body):
        raise ParseError(f"JSON reply without an integer {'/'.join(_JSON_KEYS)} key")
    return found


def _agreeing(numbers: list[int], what: str) -> int | None:
    distinct = sorted(set(numbers))
    if len(distinct) > 1:
        raise ParseError(f"{what} name different options: {distinct}")
    return distinct[0] if distinct else None


def _in_number_list(body: str, match: re.Match[str]) -> bool:
    """Whether the number of ``match`` (group 1) is part of a list of numbers: it runs on into
    another number (`1, 2`, `1 or 2`, `1-3`), or it heads one (`Option 0: 1, 2, 3`)."""
    end = match.end(1)
    return bool(_RUNS_ON.match(body, end) or _HEADS_A_LIST.match(body, end))


def _numbers(pattern: re.Pattern[str], body: str, what: str) -> list[int]:
    """The numbers ``pattern`` finds in ``body``, without those that are part of a list of
    numbers; when there are only such, the reply names no option (a ParseError)."""
    matches = list(pattern.finditer(body))
    single = [int(m.group(1)) for m in matches if not _in_number_list(body, m)]
    if matches and not single:
        listed = ", ".join(repr(m.group(0).strip()) for m in matches[:3])
        raise ParseError(f"{what} name a list of numbers, not one option index: {listed}")
    return single


FROM_PROSE = (
    "option index recovered from free text ({how}), not a reply that is only the index as the "
    "prompt asks"
)


def read_option_index(text: str) -> tuple[int, str | None]:
    """The option index and, when it was recovered from free text rather than given as asked
    (the reply is only the integer, or only one JSON object holding it), how it was found."""
    body = strip_reasoning(text)
    if not body:
        raise ParseError("empty reply (after removing reasoning)")
    from_json = _from_json(body)
    if from_json is not None:
        if _whole_reply_is_json(body):
            return from_json, None
        return from_json, FROM_PROSE.format(how="a JSON object inside other text")
    for pattern, how in zip(_ANSWER_PATTERNS, _PHRASE_KINDS, strict=True):
        found = _agreeing(_numbers(pattern, body, "answer phrases"), "answer phrases")
        if found is not None:
            return found, FROM_PROSE.format(how=how)
    found = _agreeing(_numbers(_OPTION_PATTERN, body, "option mentions"), "option mentions")
    if found is not None:
        return found, FROM_PROSE.format(how="an option mention")
    bare = _BARE.match(body)
    if bare:
        return int(bare.group(1)), None
    raise ParseError("no option index found")


def parse_option_index(text: str) -> int:
    return read_option_index(text)[0]


@registry.parsers.register("reaction_mc_option_index")
def parse(text: str, sample: Sample, **params: Any) -> int | Degraded:
    index, degraded = read_option_index(text)
    return Degraded(index, degraded) if degraded else index
