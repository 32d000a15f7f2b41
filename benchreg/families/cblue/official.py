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
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from benchreg.families.cblue.rouge import RougeF, rouge_f

# --- extraction -------------------------------------------------------------------------------


def item_key(item: Mapping[str, Any]) -> tuple[Any, ...]:
    """The item's values in the order of its sorted keys, compared as their JSON text: two keys
    are equal exactly when the values' `json.dumps(v, ensure_ascii=False)` are, position by
    position. A string stands for itself (equal strings <=> equal JSON text; the common case, and
    the cost), a list of strings for its strings (`("l", *strings)`), any other value for its JSON
    text (`("t", text)`); the three never compare equal to each other."""
    keys = tuple(item)
    getter = _VALUE_GETTERS.get(keys)
    if getter is None:
        getter = _values_in_sorted_key_order(keys)
        if len(_VALUE_GETTERS) < 4096:  # key-name tuples (a task has one or two)
            _VALUE_GETTERS[keys] = getter
    values = getter(item)
    for value in values:
        if type(value) is not str:
            return tuple(map(_value_key, values))
    return values


_VALUE_GETTERS: dict[tuple[Any, ...], Callable[[Mapping[str, Any]], tuple[Any, ...]]] = {}


def _values_in_sorted_key_order(
    keys: tuple[Any, ...],
) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    order = sorted(keys)
    if len(order) > 1:
        return itemgetter(*order)
    return lambda item: tuple(item[key] for key in order)


def _value_key(value: Any) -> Any:
    """What one value of an item key is (see item_key): its JSON text decides equality. Strings
    and lists of strings are tested with isinstance, as the JSON encoder tests them."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        try:
            "".join(value)  # a TypeError unless every element is a str
        except TypeError:
            pass
        else:
            return ("l", *value)
    return ("t", _json_text(value))


_json_text = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(v, ensure_ascii=False)


def item_set(answer: Iterable[Mapping[str, Any]]) -> frozenset[tuple[Any, ...]]:
    return frozenset(map(item_key, answer))


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


class OwnClass(NamedTuple):
    """The class of an answer that names no label: its sample's own, shared with no answer."""

    sample_id: str


def invalid_label(answer: Any, sample_id: str) -> str | OwnClass:
    """The class an answer that is not a label string is scored in (status invalid, missing or
    error). A JSON number or bool is the label its text names (`3` -> "3", `true` -> "True"): the
    official scorer hands the predictions to scikit-learn as a list that numpy turns into
    strings, so such an answer is one more wrong class, as a string outside the labels is. On
    anything else (null, a list, an object, no answer at all) the official scorer aborts; it is
    a class of its own (one per sample), the worst a wrong label outside the labels can do."""
    if isinstance(answer, bool | int | float):
        return str(answer)
    return OwnClass(sample_id)


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
