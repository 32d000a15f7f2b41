"""The spec's effective score, per option and per question.

effective = yield x enantio major fraction (from ee when present, else er) x dr major fraction x
rr major fraction; an absent ee/er/dr/rr counts as 1.0. Relative score of an option = its effective
/ the best effective in the question's option set. When that best is 0 (every option gave 0), every
option is as good as the best: relative 1.0, and every index counts as a best index.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from benchreg.families.reaction_mc.notation import Reading, read_ee, read_ratio, read_yield

SELECTIVITY_FIELDS = ("ee", "er", "dr", "rr")
TIE_REL_TOL = 1e-9
_PLAIN_NUMBERS = (int, float)  # exact types: bool is an int subclass and is never a yield
_NO_YIELD = Reading(error="no yield")


class OptionOutcome(NamedTuple):
    """One option (or reference) after reading its scores."""

    yield_: float | None  # percent; None when absent or unreadable
    effective: float | None  # None when the yield is absent or unreadable
    errors: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def readable(self) -> bool:
        return not self.errors and self.effective is not None


def outcome_of(scores: Mapping[str, Any] | None, fallback_yield: Any = None) -> OptionOutcome:
    """Read one ``meta.scores`` entry; ``fallback_yield`` (meta.yields[i]) fills a missing yield."""
    scores = scores or {}
    get = scores.get
    raw_yield = get("yield")
    if raw_yield is None:
        raw_yield = fallback_yield
    ee, er, dr, rr = get("ee"), get("er"), get("dr"), get("rr")
    if type(raw_yield) in _PLAIN_NUMBERS and raw_yield >= 0:  # False for NaN
        # the common case, a plain yield: what read_outcome gives, without its work
        value = float(raw_yield)
        if ee is None and er is None and dr is None and rr is None:
            return OptionOutcome(value, value)
        try:
            (a, b, c), errors, notes = _selectivity(ee, er, dr, rr)
        except TypeError:  # a cell that is a list or a dict: unhashable, read each time
            return read_outcome(raw_yield, ee, er, dr, rr)
        return OptionOutcome(value, value * a * b * c, errors, notes)
    return read_outcome(raw_yield, ee, er, dr, rr)


def read_outcome(raw_yield: Any, ee: Any, er: Any, dr: Any, rr: Any) -> OptionOutcome:
    """The spec's formula over one option's cells: effective = yield x the major fractions of
    ee (else er), dr and rr, an absent one counting as 1.0."""
    readings = [read_yield(raw_yield)]
    if readings[0].absent:
        readings.append(_NO_YIELD)
    enantio = read_ee(ee)  # an absent ee (also "n.d.") gives way to er
    readings += (
        read_ratio(er, "er") if enantio.absent else enantio,
        read_ratio(dr, "dr"),
        read_ratio(rr, "rr"),
    )
    yield_value = readings[0].value
    effective = None
    if yield_value is not None:
        effective = yield_value
        for reading in readings[-3:]:
            effective *= 1.0 if reading.value is None else reading.value
    errors = tuple(r.error for r in readings if r.error)
    notes = tuple(r.note for r in readings if r.note)
    return OptionOutcome(yield_value, effective, errors, notes)


@lru_cache(maxsize=8192, typed=True)  # a table repeats its selectivity cells across options
def _selectivity(
    ee: Any, er: Any, dr: Any, rr: Any
) -> tuple[tuple[float, float, float], tuple[str, ...], tuple[str, ...]]:
    """The three factors of :func:`read_outcome` beside a plain yield (1.0 for an absent one,
    applied in this order, as it does), and the readings' errors and notes."""
    enantio = read_ee(ee)
    readings = (
        read_ratio(er, "er") if enantio.absent else enantio,
        read_ratio(dr, "dr"),
        read_ratio(rr, "rr"),
    )
    a, b, c = (1.0 if r.value is None else r.value for r in readings)
    errors = tuple(r.error for r in readings if r.error)
    notes = tuple(r.note for r in readings if r.note)
    return (a, b, c), errors, notes


def is_tie(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TIE_REL_TOL, abs_tol=1e-12)


def best_indices(values: Sequence[float]) -> list[int]:
    """Indices of the maximum (ties kept, within a float tolerance)."""
    if not values:
        return []
    top = max(values)
    return [i for i, v in enumerate(values) if is_tie(v, top)]


def relative(value: float, best: float) -> float:
    """value / best; 1.0 when best is 0 (then every option is a best option)."""
    if best <= 0:
        return 1.0
    return value / best


class QuestionScores(NamedTuple):
    """Everything the metrics need about one question, computed once at load time.

    ``source`` says where the numbers come from: ``formula`` (recomputed from ``meta.scores``; an
    option whose scores cannot be read falls back to ``meta.effective_scores[i]`` and is listed in
    ``fallback_options``) or ``stored`` (``meta.option_relative_scores``, ``answer``,
    ``meta.yields`` as given). Immutable, and cheap to build (read once per question per metric).
    """

    effective: Sequence[float]
    yields: Sequence[float]
    relative: Sequence[float]
    best: Sequence[int]
    best_effective: float
    best_yield: float
    fallback_options: Sequence[int] = ()
    problems: Sequence[str] = ()

    def yield_ratio(self, index: int) -> float:
        return relative(self.yields[index], self.best_yield)

    def as_json(self) -> dict[str, Any]:
        return {
            "effective": list(self.effective),
            "yields": list(self.yields),
            "relative": list(self.relative),
            "best": list(self.best),
            "best_effective": self.best_effective,
            "best_yield": self.best_yield,
            "fallback_options": list(self.fallback_options),
            "problems": list(self.problems),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QuestionScores:
        """The scores of :meth:`as_json`; its lists are used as they are, not copied."""
        return cls(
            data["effective"],
            data["yields"],
            data["relative"],
            data["best"],
            float(data["best_effective"]),
            float(data["best_yield"]),
            data.get("fallback_options", ()),
            data.get("problems", ()),
        )


def number(value: Any) -> float | None:
    """A stored number as a float; None for NaN, booleans and anything not a number."""
    if type(value) is float:
        return None if value != value else value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def formula_scores(meta: Mapping[str, Any], n_options: int) -> QuestionScores:
    """Recompute every option's effective score from ``meta.scores`` with the spec's formula."""
    scores = meta.get("scores") or ()
    yields_meta = meta.get("yields") or ()
    stored_eff = meta.get("effective_scores") or ()
    effective: list[float] = []
    yields: list[float] = []
    fallback: list[int] = []
    problems: list[str] = []
    for i in range(n_options):
        entry = scores[i] if i < len(scores) else None
        if type(entry) is not dict and not isinstance(entry, Mapping):
            entry = {}
        outcome = outcome_of(entry, yields_meta[i] if i < len(yields_meta) else None)
        value = outcome.effective
        if outcome.errors or value is None:  # not readable
            stored = number(stored_eff[i]) if i < len(stored_eff) else None
            problems.append(f"option {i}: {'; '.join(outcome.errors)}")
            fallback.append(i)
            value = stored if stored is not None else (value or 0.0)
        effective.append(max(0.0, value or 0.0))
        yield_value = outcome.yield_
        if yield_value is None:
            yield_value = number(yields_meta[i]) if i < len(yields_meta) else None
        yields.append(max(0.0, yield_value or 0.0))
    return _assemble(effective, yields, None, None, tuple(fallback), tuple(problems))


def stored_scores(meta: Mapping[str, Any], answer: Sequence[int], n_options: int) -> QuestionScores:
    """Use the release's own numbers: option_relative_scores, answer, yields, effective_scores."""
    rel = [number(v) or 0.0 for v in list(meta.get("option_relative_scores") or [])[:n_options]]
    eff = [number(v) or 0.0 for v in list(meta.get("effective_scores") or [])[:n_options]]
    yields = [number(v) or 0.0 for v in list(meta.get("yields") or [])[:n_options]]
    return _assemble(eff, yields, rel, list(answer), (), ())


def _assemble(
    effective: list[float],
    yields: list[float],
    rel: list[float] | None,
    best: list[int] | None,
    fallback: tuple[int, ...],
    problems: tuple[str, ...],
) -> QuestionScores:
    best_effective = max(effective, default=0.0)
    best_yield = max(yields, default=0.0)
    if rel is None:
        rel = [relative(v, best_effective) for v in effective]
    if best is None:
        best = best_indices(effective)
    return QuestionScores(
        effective=tuple(effective),
        yields=tuple(yields),
        relative=tuple(rel),
        best=tuple(best),
        best_effective=best_effective,
        best_yield=best_yield,
        fallback_options=fallback,
        problems=problems,
    )
