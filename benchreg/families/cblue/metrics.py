"""Registered metrics: micro P/R/F1 (extraction), macro or weighted P/R/F1 (classification),
ROUGE-1/2/L F (MedDG, IMCS-V2-MRG by report section).

A prediction that is missing, invalid or failed is scored as the task's empty answer (`[]`, `""`
-> the first official label, `""` -> `无 。`, `{}`). An out-of-range label is scored as given.
Per-sample parts are cached per (sample, prediction) pair, so recomputing a metric on bootstrap
resamples only re-aggregates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from benchreg.core import registry
from benchreg.core.types import MetricResult, Prediction, Sample, Status
from benchreg.families.cblue import official
from benchreg.families.cblue.rouge import RougeF

SCORED_AS_GIVEN = frozenset({Status.OK, Status.OUT_OF_RANGE})
T = TypeVar("T")


def answer_or(pred: Prediction, empty: Any) -> Any:
    return pred.answer if pred.status in SCORED_AS_GIVEN else empty


class PairCache(Generic[T]):
    """Per-(sample, prediction) parts, reused while the same objects are scored again.

    An entry holds the objects it was computed from (so their ids stay unique) and is used only
    for the same sample and while the prediction still carries the same answer object and status.
    """

    def __init__(self, compute: Callable[[Sample, Prediction], T], max_entries: int = 400_000):
        self._compute = compute
        self._max = max_entries
        self._entries: dict[int, tuple[Prediction, Sample, Any, Status, T]] = {}

    def __call__(self, sample: Sample, pred: Prediction) -> T:
        hit = self._entries.get(id(pred))
        if (
            hit is not None
            and hit[0] is pred
            and hit[1] is sample
            and hit[2] is pred.answer
            and hit[3] is pred.status
        ):
            return hit[4]
        value = self._compute(sample, pred)
        if len(self._entries) >= self._max:
            self._entries.clear()
        self._entries[id(pred)] = (pred, sample, pred.answer, pred.status, value)
        return value


_overlaps: PairCache[official.Overlap] = PairCache(
    lambda s, p: official.overlap(s.gold, answer_or(p, []))
)
_reply_rouge: PairCache[RougeF] = PairCache(
    lambda s, p: official.reply_rouge(s.gold, answer_or(p, ""))
)
_report_rouge: PairCache[official.RougeTotal] = PairCache(
    lambda s, p: official.rouge_total(official.report_rouge(s.gold, answer_or(p, {})))
)

PRF_STATS = ("precision", "recall", "f1")
ROUGE_STATS = ("rouge1", "rouge2", "rougeL")


def _stat(stat: str, allowed: tuple[str, ...]) -> int:
    if stat not in allowed:
        raise ValueError(f"stat must be one of {allowed}, got {stat!r}")
    return allowed.index(stat)


@registry.metrics.register("cblue_micro_prf")
def micro_prf(
    samples: Sequence[Sample], predictions: Sequence[Prediction], *, stat: str = "f1"
) -> MetricResult:
    """Micro P/R/F1 over per-sample item sets (the 7 extraction tasks)."""
    index = _stat(stat, PRF_STATS)
    prf, totals = official.micro_prf(
        _overlaps(s, p) for s, p in zip(samples, predictions, strict=True)
    )
    n = len(samples)
    return MetricResult(prf[index], n, n, detail=dict(totals._asdict()))


@registry.metrics.register("cblue_label_prf")
def label_prf(
    samples: Sequence[Sample],
    predictions: Sequence[Prediction],
    *,
    average: str,
    empty_label: str,
    stat: str = "f1",
) -> MetricResult:
    """Macro (CHIP-CTC, IMCS-V2-DAC, KUAKE-QIC) or support-weighted (CHIP-STS, KUAKE-IR/QQR/QTR)
    P/R/F1 over the labels seen in gold and predictions; `""` counts as ``empty_label``."""
    index = _stat(stat, PRF_STATS)
    pairs = [
        (s.gold, official.effective_label(answer_or(p, ""), empty_label))
        for s, p in zip(samples, predictions, strict=True)
    ]
    prf = official.label_prf(pairs, average)
    n = len(samples)
    return MetricResult(prf[index], n, n, detail={"average": average, "classes": _classes(pairs)})


def _classes(pairs: Sequence[tuple[str, str]]) -> int:
    return len({g for g, _ in pairs} | {p for _, p in pairs})


@registry.metrics.register("cblue_reply_rouge")
def reply_rouge(
    samples: Sequence[Sample], predictions: Sequence[Prediction], *, stat: str = "rougeL"
) -> MetricResult:
    """MedDG: mean ROUGE F over samples (character tokens); per-sample scores included."""
    index = _stat(stat, ROUGE_STATS)
    per_sample = [_reply_rouge(s, p)[index] for s, p in zip(samples, predictions, strict=True)]
    n = len(samples)
    return MetricResult(sum(per_sample) / n if n else 0.0, n, n, per_sample=per_sample)


@registry.metrics.register("cblue_report_rouge")
def report_rouge(
    samples: Sequence[Sample], predictions: Sequence[Prediction], *, stat: str = "rougeL"
) -> MetricResult:
    """IMCS-V2-MRG: mean ROUGE F over (sample, gold report section) pairs."""
    index = _stat(stat, ROUGE_STATS)
    mean, pairs = official.mean_rouge(
        _report_rouge(s, p) for s, p in zip(samples, predictions, strict=True)
    )
    n = len(samples)
    return MetricResult(mean[index], n, n, detail={"section_pairs": pairs})
