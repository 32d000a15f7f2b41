"""A gate: a pass/fail threshold on a metric value, written ``">= 0.90"`` or ``"<= 0.10"``."""

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
        """What goes beside the value in metrics.json: the gate and whether it passes."""
        return {"gate": str(self), "pass": self.passes(value)}
