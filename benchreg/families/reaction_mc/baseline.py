"""Offline baseline `reaction_mc_nearest_reference` (a labelled heuristic, not a model).

With references: take the reference with the highest effective score and answer the option whose
conditions share the most values with it (ties -> lowest index). Without references: option 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from benchreg.core import registry
from benchreg.core.system import SystemContext
from benchreg.core.types import Sample
from benchreg.families.reaction_mc.conditions import condition_signature, merged
from benchreg.families.reaction_mc.effective import outcome_of


def _best_reference(references: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    best, best_value = None, float("-inf")
    for ref in references:
        outcome = outcome_of(ref.get("outcome") or {})
        value = outcome.effective if outcome.effective is not None else ref.get("effective_score")
        if isinstance(value, int | float) and value > best_value:
            best, best_value = ref, float(value)
    return best


def nearest_reference_choice(sample: Sample) -> int:
    inp = sample.input["input"]
    reference = _best_reference(inp.get("reference_conditions") or [])
    if reference is None:
        return 0
    ref_items = dict(condition_signature(reference.get("conditions") or {}))
    context = merged(inp.get("constant_conditions"), inp.get("fixed_conditions"))

    def shared(option: Mapping[str, Any]) -> int:
        items = dict(condition_signature(merged(context, option)))
        return sum(1 for key in option if key in items and items.get(key) == ref_items.get(key))

    overlaps = [shared(option) for option in sample.input["options"]]
    return overlaps.index(max(overlaps))


@registry.baselines.register("reaction_mc_nearest_reference")
def make(ctx: SystemContext) -> Callable[[Sample], int]:
    """The baseline takes no params (an unknown one is an error)."""
    return nearest_reference_choice
