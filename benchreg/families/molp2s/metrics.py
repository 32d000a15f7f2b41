"""MolP2S counts: the spec's hit count and number of tasks.

Accuracy is the core's generic `accuracy` (an ok answer equal to the label is a hit; a missing
record, a line marked invalid and an index outside the candidate list are not; every record of
the file is in the denominator). The spec's missing / invalid / out-of-range counts are the
core's status counts (`statuses` in metrics.json).
"""

from __future__ import annotations

from collections.abc import Sequence

from benchreg.core import registry
from benchreg.core.metric import is_hit
from benchreg.core.types import Prediction, Sample


@registry.counts.register("molp2s")
def molp2s_counts(samples: Sequence[Sample], predictions: Sequence[Prediction]) -> dict[str, int]:
    return {
        "hits": sum(is_hit(s, p) for s, p in zip(samples, predictions, strict=True)),
        "tasks": len(samples),
    }
