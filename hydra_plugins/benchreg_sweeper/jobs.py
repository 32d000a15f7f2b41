"""A sweep's jobs from its overrides, as Hydra's basic sweeper makes them: the cartesian product
of every override's values, in the order the overrides are given (the first varies slowest), cut
into batches of ``max_batch_size``."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hydra.core.override_parser.types import Override
from hydra.errors import HydraException

Job = list[str]


def job_batches(overrides: Sequence[Override], max_batch_size: int | None) -> list[list[Job]]:
    """Every job's overrides, in batches. A key given twice keeps its first place and its last
    values, as in the basic sweeper."""
    values: dict[str, list[str]] = {}
    for override in overrides:
        key = override.get_key_element()
        if not override.is_sweep_override():
            values[key] = [f"{key}={override.get_value_element_as_str()}"]
        elif override.is_discrete_sweep():
            values[key] = [f"{key}={value}" for value in override.sweep_string_iterator()]
        else:
            kind = override.value_type.name if override.value_type is not None else "?"
            raise HydraException(f"the benchreg sweeper does not support sweep type: {kind}")
    jobs = [list(job) for job in itertools.product(*values.values())]
    if max_batch_size is None or max_batch_size == -1:
        return [jobs]
    if max_batch_size <= 0:
        raise HydraException(f"hydra.sweeper.max_batch_size={max_batch_size} must be positive")
    return [jobs[i : i + max_batch_size] for i in range(0, len(jobs), max_batch_size)]


def covering_jobs(batch: Sequence[Sequence[str]]) -> list[Sequence[str]]:
    """The jobs of ``batch`` that bring an override not seen in an earlier job: composing them
    composes every distinct override once."""
    seen: set[str] = set()
    chosen = []
    for job in batch:
        if not seen.issuperset(job):
            chosen.append(job)
            seen.update(job)
    return chosen
