"""Reading outcome notations: yields, ee, er, dr, rr as they appear in condition tables.

Each reader returns a :class:`Reading`: ``value`` (``None`` when the field is absent), an optional
``note`` (how a bound or a word was read) and an ``error`` (the text could not be read). The
choices, also in docs/reaction_mc.md:

- absent: ``None``, NaN, ``""``, ``"-"``, ``"—"``, ``"n/a"``, ``"na"``;
- yield (percent): a number, ``"85%"``; a bound (``"<5%"``, ``">95%"``, ``"≥90"``) is read as its
  number; ``"trace"``, ``"n.d."``/``"nd"`` (not detected), ``"n.r."``/``"nr"``/``"no reaction"``
  -> 0; ``"quant."``/``"quantitative"`` -> 100; a negative yield is read as 0 (noted);
- ee (percent, sign ignored): ``92``, ``"-92"``, ``"92% ee"``, ``">99% ee"``, ``"(R) 92"``;
  ``"rac"``/``"racemic"`` -> 0; ``"n.d."`` (not determined) counts as absent; |ee| > 100 is an
  error. The major-enantiomer fraction is ``(100 + |ee|) / 200``;
- er, dr, rr (major fraction): ``"a:b"`` or ``"a/b"`` (any number of parts) -> ``max / sum``;
  a bound (``">20:1"``) is read as its ratio; a plain number ``x`` means ``x:1`` (so ``20`` ->
  20/21 and ``0.5`` -> 1:2 -> 2/3); ``"95%"`` is the share of one isomer -> ``max(p, 100-p)/100``;
  ``"single diastereomer"``/``"single isomer"``/``"single"`` -> 1.0.

Anything else (ranges like ``"10-15%"``, footnote marks like ``"85b"``, two numbers) is an error,
never a guess.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, NamedTuple

_ABSENT = {"", "-", "—", "–", "n/a", "na", "none", "null"}
_YIELD_ZERO = {"trace", "traces", "n.d.", "nd", "n.d", "n.r.", "nr", "n.r", "no reaction",
               "not detected", "no product", "0 (trace)"}
_YIELD_FULL = {"quant.", "quant", "quantitative"}
_NOT_DETERMINED = {"n.d.", "nd", "n.d", "not determined"}
_SINGLE_ISOMER = {"single", "single isomer", "single diastereomer", "single regioisomer",
                  "single enantiomer", "only isomer"}

_NUMBER = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_BOUND = r"(?P<bound>>=|<=|[<>≥≤~≈])?"
_YIELD_RE = re.compile(rf"^{_BOUND}\s*(?P<num>{_NUMBER})\s*%?$")
_EE_RE = re.compile(
    rf"^(?:\((?:R|S|\+|-)\)\s*)?{_BOUND}\s*(?P<num>{_NUMBER})\s*%?\s*(?:ee)?\s*(?:\((?:R|S)\))?$",
    re.IGNORECASE,
)
_RATIO_RE = re.compile(
    rf"^(?:(?:e\.?r\.?|d\.?r\.?|r\.?r\.?)\s*[:=]?\s*)?{_BOUND}\s*"
    rf"(?P<parts>{_NUMBER}(?:\s*[:/]\s*{_NUMBER})+)\s*(?:e\.?r\.?|d\.?r\.?|r\.?r\.?)?$",
    re.IGNORECASE,
)
_PERCENT_RE = re.compile(rf"^{_BOUND}\s*(?P<num>{_NUMBER})\s*%$")
_PLAIN_RE = re.compile(rf"^{_BOUND}\s*(?P<num>{_NUMBER})$")


class Reading(NamedTuple):
    """One outcome field after reading: a number, nothing, or an error."""

    value: float | None = None
    note: str | None = None
    error: str | None = None

    @property
    def absent(self) -> bool:
        return self.value is None and self.error is None


def _clean(raw: Any) -> str | None:
    """The text of a cell, or None when the cell is absent."""
    if raw is None:
        return None
    if isinstance(raw, bool):
        return str(raw)  # never a number; reported as unreadable
    if isinstance(raw, int | float):
        if isinstance(raw, float) and math.isnan(raw):
            return None
        return repr(raw) if isinstance(raw, float) else str(raw)
    text = str(raw).strip().replace("−", "-").replace("％", "%").replace("：", ":")
    return None if text.lower() in _ABSENT else text


def _bound_note(match: re.Match[str], text: str) -> str | None:
    return f"bound {text!r} read as its number" if match.group("bound") else None


def _read_yield(raw: Any) -> Reading:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        if isinstance(raw, float) and math.isnan(raw):
            return Reading()
        if raw < 0:
            return Reading(0.0, note=f"negative yield {raw!r} read as 0")
        return Reading(float(raw))
    text = _clean(raw)
    if text is None:
        return Reading()
    low = text.lower()
    if low in _YIELD_ZERO:
        return Reading(0.0, note=f"{text!r} read as 0")
    if low in _YIELD_FULL:
        return Reading(100.0, note=f"{text!r} read as 100")
    match = _YIELD_RE.match(text)
    if not match:
        return Reading(error=f"unreadable yield {raw!r}")
    value = float(match.group("num"))
    if value < 0:
        return Reading(0.0, note=f"negative yield {raw!r} read as 0")
    return Reading(value, note=_bound_note(match, text))


def _read_ee(raw: Any) -> Reading:
    text = _clean(raw)
    if text is None:
        return Reading()
    low = text.lower()
    if low in _NOT_DETERMINED:
        return Reading(note=f"ee {text!r} (not determined) counted as absent")
    if low in {"rac", "rac.", "racemic"}:
        return Reading(0.5, note=f"ee {text!r} read as 0")
    match = _EE_RE.match(text)
    if not match:
        return Reading(error=f"unreadable ee {raw!r}")
    ee = abs(float(match.group("num")))
    if ee > 100:
        return Reading(error=f"ee {raw!r} is above 100%")
    return Reading((100.0 + ee) / 200.0, note=_bound_note(match, text))


def _read_ratio(raw: Any, field: str = "ratio") -> Reading:
    text = _clean(raw)
    if text is None:
        return Reading()
    low = text.lower()
    if low in _NOT_DETERMINED:
        return Reading(note=f"{field} {text!r} (not determined) counted as absent")
    if low in _SINGLE_ISOMER:
        return Reading(1.0, note=f"{field} {text!r} read as 1.0")
    match = _RATIO_RE.match(text)
    if match:
        parts = [float(p) for p in re.split(r"\s*[:/]\s*", match.group("parts"))]
        if any(p < 0 for p in parts) or sum(parts) <= 0:
            return Reading(error=f"{field} {raw!r} has no positive parts")
        return Reading(max(parts) / sum(parts), note=_bound_note(match, text))
    match = _PERCENT_RE.match(text)
    if match:
        share = float(match.group("num"))
        if not 0 <= share <= 100:
            return Reading(error=f"{field} {raw!r} is not a percentage in 0..100")
        return Reading(max(share, 100 - share) / 100.0, note=_bound_note(match, text))
    match = _PLAIN_RE.match(text)
    if match:
        x = float(match.group("num"))
        if x < 0:
            return Reading(error=f"{field} {raw!r} is negative")
        return Reading(max(x, 1.0) / (x + 1.0), note=f"{field} {text!r} read as {text}:1")
    return Reading(error=f"unreadable {field} {raw!r}")


# A table repeats its notations ("95% ee", ">20:1") across entries and questions, and a Reading is
# immutable: each distinct cell value is read once (typed, so 94 and 94.0 keep their own texts).
_NOTHING = Reading()
_yield_cell = lru_cache(maxsize=8192, typed=True)(_read_yield)
_ee_cell = lru_cache(maxsize=8192, typed=True)(_read_ee)
_ratio_cell = lru_cache(maxsize=8192, typed=True)(_read_ratio)


def read_yield(raw: Any) -> Reading:
    """A yield in percent (see the module doc for the accepted forms)."""
    if raw is None:
        return _NOTHING
    if type(raw) is float or type(raw) is int:
        return _read_yield(raw)
    return _yield_cell(raw) if raw.__hash__ is not None else _read_yield(raw)


def yield_value(raw: Any) -> float | None:
    """``read_yield(raw).value``; a plain non-negative number is its own value."""
    if (type(raw) is float or type(raw) is int) and raw >= 0:
        return float(raw)
    return read_yield(raw).value


def read_ee(raw: Any) -> Reading:
    """An ee in percent -> the major-enantiomer fraction ``(100 + |ee|) / 200``."""
    if raw is None:
        return _NOTHING
    return _ee_cell(raw) if raw.__hash__ is not None else _read_ee(raw)


def read_ratio(raw: Any, field: str = "ratio") -> Reading:
    """An er/dr/rr -> the major-isomer fraction (see the module doc for the accepted forms)."""
    if raw is None:
        return _NOTHING
    return _ratio_cell(raw, field) if raw.__hash__ is not None else _read_ratio(raw, field)
