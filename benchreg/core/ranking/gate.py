"""A gate: a threshold on a metric value, written ``">= 0.90"`` or ``"<= 0.10"``.

Judged on the value's 95% interval, not the value alone (a value of 1.0 on 9 entries does not
show a rate of at least 0.90): "pass" when the whole interval clears the gate (the lower bound of
``>= t``, the upper bound of ``<= t``), "fail" when none of it does, else "inconclusive"; on
demonstration data (gold written by the project) "demo", never a verdict."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchreg.core.errors import BenchregError

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}
_PATTERN = re.compile(r"^\s*(>=|<=|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


DEMO_VERDICT = "demo"  # the verdict of a gate on demonstration data: not a benchmark result
DEMO_JUDGED = "not judged: demonstration data, not a benchmark result"


@dataclass(frozen=True, slots=True)
class Gate:
    op: str
    threshold: float

    @classmethod
    def parse(cls, text: Any) -> Gate | None:
        if text is None:
            return None
        match = _PATTERN.match(str(text))
        if match is None:
            raise BenchregError(
                f"bad gate {text!r}", fix="write a comparison and a number, e.g. '>= 0.90'"
            )
        return cls(match.group(1), float(match.group(2)))

    def passes(self, value: float) -> bool:
        return _OPS[self.op](value, self.threshold)

    def __str__(self) -> str:
        return f"{self.op} {self.threshold:g}"

    def report(self, value: float) -> dict[str, Any]:
        """What goes beside the value in metrics.json before its interval is known: the gate
        and whether the value alone clears it (:meth:`verdict` replaces it)."""
        return {"gate": str(self), "pass": self.passes(value)}

    def verdict(
        self, value: float | None, ci: tuple[float, float] | None, *, demonstration: bool = False
    ) -> dict[str, Any]:
        """The gate judged on the interval: ``verdict`` pass / fail / inconclusive (``pass``
        True / False / None), or "n/a" with no value. Without an interval (``ci: none``, no
        bootstrap) the value alone is judged, and ``judged_on`` says so. On ``demonstration``
        data (gold written by the project itself) there is no verdict: ``verdict`` "demo",
        ``pass`` None (:data:`DEMO_VERDICT`)."""
        out: dict[str, Any] = {"gate": str(self)}
        if value is None:
            return {**out, "pass": None, "verdict": "n/a", "judged_on": "no value"}
        if demonstration:
            return {**out, "pass": None, "verdict": DEMO_VERDICT, "judged_on": DEMO_JUDGED}
        lo, hi = ci if ci is not None else (value, value)
        # the bound least favourable to the gate must clear it; the most favourable one must
        # clear it for anything but a fail
        worst, best = (lo, hi) if self.op in (">=", ">") else (hi, lo)
        verdict = "inconclusive"
        if self.passes(worst):
            verdict = "pass"
        elif not self.passes(best):
            verdict = "fail"
        out["pass"] = {"pass": True, "fail": False}.get(verdict)
        out["verdict"] = verdict
        out["judged_on"] = "95% CI" if ci is not None else "value (no interval)"
        return out
