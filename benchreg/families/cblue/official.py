"""The per-sample parts of the official PromptCBLUE scores (item-set overlaps, effective labels,
ROUGE values); metrics.py turns them into per-sample statistics and aggregates them.

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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from benchreg.families.cblue.rouge import RougeF, rouge_f

# --- extraction -------------------------------------------------------------------------------


def item_key(item: Mapping[str, Any]) -> tuple[str, ...]:
    """The item's values in the order of its sorted keys, compared as their JSON text."""
    values = [item[key] for key in sorted(item)]
    if all(type(value) is str for value in values):
        # equal strings <=> equal JSON text: skip json.dumps (the common case, and the cost);
        # the "" / "j" tag keeps an all-string item apart from one with other values
        return ("", *values)
    return ("j", *(_json_text(value) for value in values))


_json_text = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(v, ensure_ascii=False)


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


# --- classification ---------------------------------------------------------------------------


def effective_label(label: str, empty_label: str) -> str:
    return empty_label if label == "" else label


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
