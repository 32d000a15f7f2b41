"""Counts written to metrics.json for a PromptCBLUE run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchreg.core import registry
from benchreg.core.scoring import count_statuses
from benchreg.core.types import Prediction, PredictionSet, Sample, Status
from benchreg.families.cblue.schema import off_schema_items


@registry.counters.register("cblue")
def cblue_counts(
    samples: Sequence[Sample],
    preds: Sequence[Prediction],
    prediction_set: PredictionSet | None,
    **params: Any,
) -> dict[str, int]:
    """Statuses, plus: samples, unknown_ids (predictions for ids not in the task),
    empty_answers (valid but empty: [], "" or {}), off_schema_items (list items that deviate from
    the documented item shape; they are scored as the official evaluator scores them)."""
    counts = count_statuses(preds)
    counts["samples"] = len(samples)
    counts["unknown_ids"] = len(prediction_set.unknown_ids) if prediction_set else 0
    scored = [
        (s, p)
        for s, p in zip(samples, preds, strict=True)
        if p.status in (Status.OK, Status.OUT_OF_RANGE)
    ]
    counts["empty_answers"] = sum(1 for _, p in scored if _is_empty(p.answer))
    counts["off_schema_items"] = sum(
        off_schema_items(str(s.input.get("task_dataset")), p.answer) for s, p in scored
    )
    return counts


def _is_empty(answer: Any) -> bool:
    if isinstance(answer, dict):
        return not any(str(v).strip() for v in answer.values())
    return isinstance(answer, list | str) and not answer
