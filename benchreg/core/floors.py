"""Floors: what rankings that read no text score on the same data, shown beside every system.

A score means little without the score of a system that knows nothing of the question (the
first pages of the document, the first elements of the screen): a retriever that does not beat
such a floor has learnt a position prior, not the text. A family that has floors registers, under
its own name in :data:`floor_makers`, a function of the run's :class:`SystemContext` returning a
:class:`FloorSet` (or None: no floor for this data). The core asks each floor for an answer per
sample, then parses, checks, resolves and scores those answers exactly as a system's (the same
resolver, metrics, bootstrap seed), and keeps the metrics the family names. They go into
`metrics.json` under `floor` (`{name: {"description", "metrics": {metric: value, n, CI}}}`) and
under the system's metrics in the run table; the core knows no family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from benchreg.core.registry import Registry
from benchreg.core.system import SystemContext
from benchreg.core.types import Prediction, Sample


@dataclass(frozen=True, slots=True)
class Floor:
    """One floor: its answer to a sample (what a system's answer would be) and what it does."""

    answer: Callable[[Sample], Any]
    description: str


@dataclass(frozen=True, slots=True)
class FloorSet:
    floors: Mapping[str, Floor]
    metrics: tuple[str, ...]  # the output names to keep (the family's ranking metrics)


FloorMaker = Callable[[SystemContext], FloorSet | None]
floor_makers: Registry[FloorMaker] = Registry("floor maker")


def floor_record(
    ctx: SystemContext, dataset: Any, *, n_boot: int, seed: int
) -> dict[str, Any]:
    """`{floor: {"description", "metrics": {name: MetricValue json}}}` for the task's family, or
    {} when the family registers no floors (its modules are loaded by the time a task runs)."""
    from benchreg.core.scoring import parse_and_check, resolve, score

    maker = floor_makers.registered().get(ctx.task.spec.family)
    made = maker(ctx) if maker is not None else None
    if made is None:
        return {}
    samples = list(ctx.samples)
    record: dict[str, Any] = {}
    for name, floor in made.floors.items():
        preds = [Prediction(s.id, answer=floor.answer(s)) for s in samples]
        parse_and_check(ctx.task, samples, preds)
        resolve(ctx.task, dataset, samples, preds)
        values = score(ctx.task, samples, preds, n_boot=n_boot, seed=seed, progress=False).values
        record[name] = {
            "description": floor.description,
            "metrics": {m: values[m].as_json() for m in made.metrics if m in values},
        }
    return record


def floor_lines(record: Mapping[str, Any]) -> list[str]:
    """The run table's lines of a metrics.json `floor` block: one per floor, its values beside
    the system's (with n and the 95% CI where there is one)."""
    lines = []
    for name, floor in (record.get("floor") or {}).items():
        cells = []
        for metric, value in (floor.get("metrics") or {}).items():
            number = value.get("value")
            text = "null" if number is None else f"{number:.4f}"
            ci = value.get("ci95")
            if ci and len(ci) == 2 and None not in ci:
                text += f" [{ci[0]:.4f}, {ci[1]:.4f}]"
            cells.append(f"{metric} {text} (n={value.get('n')})")
        lines.append(f"floor {name}: " + "; ".join(cells))
    return lines
