"""Registered metrics (per-sample statistics + an aggregate) and the family counter.

- `cblue_micro_prf` (7 extraction tasks): stats tp/fp/fn per sample -> micro precision, recall, f1.
- `cblue_label_prf` (7 classification tasks, param `average`: macro | weighted): stats = (gold,
  predicted) label ids -> per-class counts -> macro or support-weighted P/R/F1 over the classes
  seen (true + predicted > 0); outputs `macro-precision/macro-recall/macro-f1` or
  `precision/recall/f1`, the official names.
- `cblue_reply_rouge` (MedDG): mean over samples of ROUGE-1/2/L F.
- `cblue_report_rouge` (IMCS-V2-MRG): stats = per-sample sums of section ROUGE F and the number of
  (sample, gold section) pairs -> mean over pairs.

A prediction that is missing, invalid or failed is scored as a wrong answer that matches nothing
(issue 37: invalid never beats wrong), never as the task's empty answer (which can earn credit:
`""` counts as the first official label, an empty reply or report section as `无 。`): extraction
as one predicted item that matches no gold item (a false positive; its gold items are false
negatives), classification as a wrong label outside the labels (official.invalid_label: a number
or bool is the class its text names, as the official scorer reads it; anything else a class of
its own), MedDG and IMCS-V2-MRG as ROUGE 0 (for every gold section). An ok answer is scored as
given, an empty one with the official empty semantics; an out-of-range label is scored as given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.metric import SCORED_AS_GIVEN, MeanMetric, Metric
from benchreg.core.types import Prediction, Sample
from benchreg.families.cblue import official
from benchreg.families.cblue.answer import off_schema_items
from benchreg.families.cblue.catalogue import task_of_sample

PRF = ("precision", "recall", "f1")
ROUGE = ("rouge1", "rouge2", "rougeL")
NO_LABEL = -1  # no class (a miss in the per-class hit counts)
UNMATCHED_ITEM = 1  # false positives of an answer not scored as given: one item matching nothing
NO_ROUGE = (0.0, 0.0, 0.0)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den == 0 (elementwise, any shape)."""
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


@registry.metrics.register("cblue_micro_prf")
class MicroPRF(Metric):
    """Micro P/R/F1 over per-sample item sets; P = R = F1 = 0 when TP = 0."""

    outputs = PRF

    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        rows = [
            official.overlap(s.gold, p.answer)
            if p.status in SCORED_AS_GIVEN
            else (0, UNMATCHED_ITEM, len(official.item_set(s.gold)))
            for s, p in zip(samples, predictions, strict=True)
        ]
        return np.asarray(rows, dtype=float).reshape(len(rows), 3)

    def reduce(self, totals: np.ndarray, n: int) -> np.ndarray:
        tp, fp, fn = totals[..., 0], totals[..., 1], totals[..., 2]
        precision = _ratio(tp, tp + fp)
        recall = _ratio(tp, tp + fn)
        f1 = _ratio(2 * precision * recall, precision + recall)
        return np.stack([precision, recall, f1], axis=-1)

    def detail(self, stats: np.ndarray) -> dict[str, Any]:
        tp, fp, fn = (int(x) for x in stats.sum(axis=0)) if len(stats) else (0, 0, 0)
        return {"tp": tp, "fp": fp, "fn": fn}


@registry.metrics.register("cblue_label_prf")
class LabelPRF(Metric):
    """Macro or support-weighted P/R/F1 over the labels seen in gold and predictions (as
    scikit-learn's classification_report, zero_division=0); `""` counts as the task's first
    official label. Statistics are label ids; the vocabulary lives on the instance, so ids stay
    stable across the chunks the core scores in. A prediction not scored as given (missing,
    invalid, error) is a wrong label outside the labels (official.invalid_label)."""

    def __init__(self, *, average: str) -> None:
        if average not in ("macro", "weighted"):
            raise BenchregError(
                f"metric cblue_label_prf: unknown average {average!r}",
                fix="use average: macro or average: weighted",
            )
        self.average = average
        self.vocabulary: dict[str | official.OwnClass, int] = {}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"macro-{n}" for n in PRF) if self.average == "macro" else PRF

    def _id(self, label: str | official.OwnClass) -> int:
        return self.vocabulary.setdefault(label, len(self.vocabulary))

    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        rows = []
        empty_labels: dict[Any, str] = {}  # task_dataset -> its empty label (a task per run)
        for sample, pred in zip(samples, predictions, strict=True):
            gold = self._id(sample.gold)
            if pred.status not in SCORED_AS_GIVEN:
                rows.append((gold, self._id(official.invalid_label(pred.answer, sample.id))))
                continue
            task = sample.input.get("task_dataset")
            empty = empty_labels.get(task)
            if empty is None:
                empty = empty_labels[task] = task_of_sample(sample).empty_label
            label = official.effective_label(pred.answer, empty)
            rows.append((gold, self._id(label)))
        return np.asarray(rows, dtype=float).reshape(len(rows), 2)

    def totals(self, stats: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Per-class (true, predicted, hit) counts of each resample: ``(b, 3 x classes)``."""
        classes = len(self.vocabulary)
        if not len(stats):
            return np.zeros((len(weights), 3 * classes))
        gold, pred = stats[:, 0].astype(int), stats[:, 1].astype(int)
        hit = np.where(gold == pred, gold, NO_LABEL)  # a hit counts for its class
        return np.concatenate(
            [_class_totals(weights, labels, classes) for labels in (gold, pred, hit)], axis=1
        )

    def reduce(self, totals: np.ndarray, n: int) -> np.ndarray:
        true, pred, hit = np.split(totals, 3, axis=-1)
        seen = (true + pred) > 0
        per_class = np.stack(
            [_ratio(hit, pred), _ratio(hit, true), _ratio(2 * hit, true + pred)], axis=-1
        )
        weight = (seen if self.average == "macro" else true).astype(float)[..., None]
        return _ratio((weight * per_class).sum(axis=-2), weight.sum(axis=-2))

    def detail(self, stats: np.ndarray) -> dict[str, Any]:
        return {"average": self.average, "classes": len(np.unique(stats[stats != NO_LABEL]))}


def _class_totals(weights: np.ndarray, labels: np.ndarray, classes: int) -> np.ndarray:
    """``weights @ one_hot(labels)`` without the (n, classes) one-hot matrix: the weights summed
    per class over the samples sorted by label (label -1 counts nowhere). The weights are counts,
    so every sum is exact whatever the order."""
    out = np.zeros((len(weights), classes))
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    order, ordered = order[ordered >= 0], ordered[ordered >= 0]
    if len(order):
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        out[:, ordered[starts]] = np.add.reduceat(weights[:, order], starts, axis=1)
    return out


@registry.metrics.register("cblue_reply_rouge")
class ReplyRouge(MeanMetric):
    """MedDG: mean over samples of ROUGE-1/2/L F (character tokens)."""

    outputs = ROUGE

    def score(self, sample: Sample, prediction: Prediction) -> Sequence[float]:
        if prediction.status not in SCORED_AS_GIVEN:
            return NO_ROUGE
        return official.reply_rouge(sample.gold, prediction.answer)


@registry.metrics.register("cblue_report_rouge")
class ReportRouge(Metric):
    """IMCS-V2-MRG: mean ROUGE-1/2/L F over (sample, gold report section) pairs."""

    outputs = ROUGE

    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        rows = [
            official.rouge_total(official.report_rouge(s.gold, p.answer))
            if p.status in SCORED_AS_GIVEN
            else (*NO_ROUGE, len(s.gold) if isinstance(s.gold, dict) else 0)
            for s, p in zip(samples, predictions, strict=True)
        ]
        return np.asarray(rows, dtype=float).reshape(len(rows), 4)

    def reduce(self, totals: np.ndarray, n: int) -> np.ndarray:
        return _ratio(totals[..., :3], totals[..., 3:4])

    def detail(self, stats: np.ndarray) -> dict[str, Any]:
        return {"section_pairs": int(stats[:, 3].sum()) if len(stats) else 0}


# --- family counter ------------------------------------------------------------------------------


@registry.counts.register("cblue")
def cblue_counts(
    samples: Sequence[Sample], predictions: Sequence[Prediction], **params: Any
) -> dict[str, int]:
    """empty_answers (scored answers that are empty: [], "" or {}) and off_schema_items (list
    items that deviate from the documented item shape; scored as the official evaluator scores
    them). Statuses and unknown ids are reported by the core."""
    scored = [
        (s, p) for s, p in zip(samples, predictions, strict=True) if p.status in SCORED_AS_GIVEN
    ]
    return {
        "empty_answers": sum(1 for _, p in scored if _is_empty(p.answer)),
        "off_schema_items": sum(
            off_schema_items(str(s.input.get("task_dataset")), p.answer) for s, p in scored
        ),
    }


def _is_empty(answer: Any) -> bool:
    if isinstance(answer, dict):
        return not any(str(v).strip() for v in answer.values())
    return isinstance(answer, list | str) and not answer
