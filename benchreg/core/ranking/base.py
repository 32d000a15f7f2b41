"""The shared shape of the ranking metrics: a per-query value averaged over the samples the
metric applies to, with the count of those samples that had no scored answer.

Per-sample statistics (columns): ``value``, ``counted`` (1 when the metric applies to the
sample), ``scored`` (1 when it applies and the prediction was resolved), ``demonstration`` (1
when it applies and the family marked the sample as demonstration data: ``sample.meta
["demonstration"]`` true), then any extra columns of the subclass. The value is
``sum(value) / sum(counted)``: an applicable sample without a scored prediction (missing,
invalid, error) keeps ``missing_value`` (the worst value) and is counted as ``missing`` in the
detail. ``n`` is the scored samples, ``denominator`` the applicable ones; with a denominator of
0 the value is null in metrics.json (``MetricValue.as_json``). When any applicable sample is
demonstration data the detail says so beside the gate (``data: "demonstration data, not a
benchmark"``): a gate passed on gold written by the project itself proves nothing.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from benchreg.core.metric import Metric
from benchreg.core.ranking.gate import Gate
from benchreg.core.ranking.resolution import ResolvedRanking, resolved_of
from benchreg.core.types import Prediction, Sample

VALUE, COUNTED, SCORED, DEMO = 0, 1, 2, 3
BASE_COLUMNS = 4
DEMONSTRATION = "demonstration data, not a benchmark"


class RankingMetric(Metric):
    missing_value: ClassVar[float] = 0.0
    extra_columns: ClassVar[tuple[str, ...]] = ()  # summed into the detail under these names

    def __init__(self, gate: str | None = None) -> None:
        self.gate = Gate.parse(gate)

    @abstractmethod
    def applies(self, sample: Sample) -> bool:
        """Whether the sample is in this metric's denominator."""

    @abstractmethod
    def value(self, sample: Sample, resolved: ResolvedRanking) -> float:
        """The per-query value of a resolved prediction."""

    def extras(self, sample: Sample, resolved: ResolvedRanking | None) -> Sequence[float]:
        return ()

    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        """The rows of the module docstring, built column by column."""
        rows = np.zeros((len(samples), BASE_COLUMNS + len(self.extra_columns)))
        if len(samples) != len(predictions):  # as zip(..., strict=True) says it
            raise ValueError("zip() argument 2 is shorter or longer than argument 1")
        applies = [self.applies(s) for s in samples]
        resolved = [
            resolved_of(p) if a else None for p, a in zip(predictions, applies, strict=True)
        ]
        value, missing = self.value, self.missing_value
        rows[:, VALUE] = [
            (missing if r is None else value(s, r)) if a else 0.0
            for s, r, a in zip(samples, resolved, applies, strict=True)
        ]
        rows[:, COUNTED] = applies
        rows[:, SCORED] = [r is not None for r in resolved]
        rows[:, DEMO] = [
            a and bool(s.meta.get("demonstration")) for s, a in zip(samples, applies, strict=True)
        ]
        if self.extra_columns:
            for i, (s, r, a) in enumerate(zip(samples, resolved, applies, strict=True)):
                if a:
                    rows[i, BASE_COLUMNS:] = self.extras(s, r)
        return rows

    def query_scores(self, stats: np.ndarray) -> np.ndarray:
        value = np.where(stats[:, COUNTED] > 0, stats[:, VALUE], np.nan)
        return value.reshape(-1, 1)

    def reduce(self, totals: np.ndarray, n: int) -> np.ndarray:
        totals = np.asarray(totals, dtype=float)
        num, den = totals[..., VALUE : VALUE + 1], totals[..., COUNTED : COUNTED + 1]
        return np.divide(num, den, out=np.zeros_like(num), where=den > 0)

    def support(self, stats: np.ndarray, predictions: Sequence[Prediction]) -> tuple[int, int]:
        return int(stats[:, SCORED].sum()), int(stats[:, COUNTED].sum())

    def detail(self, stats: np.ndarray) -> dict[str, Any]:
        totals = stats.sum(axis=0)
        if not len(totals):
            totals = np.zeros(BASE_COLUMNS + len(self.extra_columns))
        out: dict[str, Any] = {"missing": int(totals[COUNTED] - totals[SCORED])}
        out.update(
            {name: int(totals[BASE_COLUMNS + i]) for i, name in enumerate(self.extra_columns)}
        )
        demo = totals[DEMO] > 0
        if self.gate is not None:
            if totals[COUNTED] > 0 and not demo:
                out.update(self.gate.report(float(self.reduce(totals, len(stats))[0])))
            else:  # nothing to judge, or no verdict on demonstration data
                out.update({"gate": str(self.gate), "pass": None})
        if demo:
            out.update({"data": DEMONSTRATION, "demonstration_entries": int(totals[DEMO])})
        return out
