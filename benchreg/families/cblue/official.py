"""The official PromptCBLUE scores, computed from per-sample contributions.

Each task's corpus score is an aggregate of per-sample parts (item-set overlaps, label pairs,
ROUGE values), so the parts are computed once per (sample, prediction) and re-aggregated cheaply,
e.g. for bootstrap resamples.

Semantics (as observed from the official evaluator, see docs/cblue.md):
- extraction: an item is the tuple of `json.dumps(value, ensure_ascii=False)` of its values in
  sorted key order (key names are not part of it); per sample, gold and predicted items are sets;
  micro TP/FP/FN over samples; P = R = F1 = 0 when TP == 0.
- classification: `""` is replaced by the task's first official label; classes are the union of
  gold and predicted labels; per-class P/R/F1 with zero division -> 0; macro = plain mean over the
  classes, weighted = mean weighted by gold support (scikit-learn's classification_report).
- generation: mean ROUGE-1/2/L F over samples (MedDG) or over (sample, gold section) pairs
  (IMCS-V2-MRG; a missing predicted section is empty, extra predicted keys are ignored).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from benchreg.families.cblue.rouge import RougeF, rouge_f


class PRF(NamedTuple):
    precision: float
    recall: float
    f1: float


# --- extraction -------------------------------------------------------------------------------


def item_key(item: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(json.dumps(item[key], ensure_ascii=False) for key in sorted(item))


def item_set(answer: Iterable[Mapping[str, Any]]) -> frozenset[tuple[str, ...]]:
    return frozenset(item_key(item) for item in answer)


class Overlap(NamedTuple):
    tp: int
    fp: int
    fn: int


def overlap(gold: Iterable[Mapping[str, Any]], predicted: Iterable[Mapping[str, Any]]) -> Overlap:
    gold_set, pred_set = item_set(gold), item_set(predicted)
    tp = len(gold_set & pred_set)
    return Overlap(tp, len(pred_set) - tp, len(gold_set) - tp)


def micro_prf(parts: Iterable[Overlap]) -> tuple[PRF, Overlap]:
    tp = fp = fn = 0
    for part in parts:
        tp += part.tp
        fp += part.fp
        fn += part.fn
    if not tp:
        return PRF(0.0, 0.0, 0.0), Overlap(tp, fp, fn)
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    return PRF(precision, recall, 2 * precision * recall / (precision + recall)), Overlap(
        tp, fp, fn
    )


# --- classification ---------------------------------------------------------------------------


def effective_label(label: str, empty_label: str) -> str:
    return empty_label if label == "" else label


def label_prf(pairs: Sequence[tuple[str, str]], average: str) -> PRF:
    """(gold, predicted) label pairs -> macro or support-weighted P/R/F1 over the seen classes."""
    if average not in ("macro", "weighted"):
        raise ValueError(f"unknown average {average!r}")
    if not pairs:
        return PRF(0.0, 0.0, 0.0)
    true_count = Counter(g for g, _ in pairs)
    pred_count = Counter(p for _, p in pairs)
    hit_count = Counter(g for g, p in pairs if g == p)
    sums = [0.0, 0.0, 0.0]
    total_weight = 0
    for label in sorted(true_count.keys() | pred_count.keys()):
        tp, true, pred = hit_count[label], true_count[label], pred_count[label]
        weight = 1 if average == "macro" else true
        sums[0] += weight * (tp / pred if pred else 0.0)
        sums[1] += weight * (tp / true if true else 0.0)
        sums[2] += weight * (2 * tp / (true + pred))  # true + pred > 0 for every seen class
        total_weight += weight
    return PRF(*(x / total_weight for x in sums))


# --- generation -------------------------------------------------------------------------------


def reply_rouge(gold: str, predicted: str) -> RougeF:
    return rouge_f(predicted, gold)


def report_rouge(gold: Mapping[str, str], predicted: Mapping[str, Any]) -> tuple[RougeF, ...]:
    """One ROUGE triple per gold section, in the gold's section order."""
    return tuple(
        rouge_f(str(predicted.get(section, "")).strip(), text.strip())
        for section, text in gold.items()
    )


class RougeTotal(NamedTuple):
    """Sums of ROUGE F over some (prediction, reference) pairs, and how many pairs."""

    rouge1: float
    rouge2: float
    rougeL: float
    pairs: int


def rouge_total(pairs: Sequence[RougeF]) -> RougeTotal:
    r1 = r2 = rl = 0.0
    for scores in pairs:
        r1 += scores.rouge1
        r2 += scores.rouge2
        rl += scores.rougeL
    return RougeTotal(r1, r2, rl, len(pairs))


def mean_rouge(totals: Iterable[RougeTotal]) -> tuple[RougeF, int]:
    """Mean ROUGE F over all pairs of the given per-sample totals."""
    r1 = r2 = rl = 0.0
    count = 0
    for total in totals:
        r1 += total.rouge1
        r2 += total.rouge2
        rl += total.rougeL
        count += total.pairs
    if not count:
        return RougeF(0.0, 0.0, 0.0), 0
    return RougeF(r1 / count, r2 / count, rl / count), count
