"""The context a system is built with, and a helper for systems that answer one sample at a time."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchreg.core.spec import TaskSpec
from benchreg.core.types import Prediction, PredictionSet, Request, Sample


@dataclass(frozen=True, slots=True)
class SystemContext:
    spec: TaskSpec
    view: str | None
    data_root: Path
    samples: Sequence[Sample]


SystemFactory = Callable[[Mapping[str, Any], SystemContext], Any]


class PerSampleSystem:
    """Wraps a function ``sample -> answer | Prediction`` as a (trivially async) system."""

    needs_prompts = False

    def __init__(self, name: str, answer: Callable[[Sample], Any]) -> None:
        self.name = name
        self._answer = answer
        self.prediction_set: PredictionSet | None = None

    async def predict(self, requests: Sequence[Request]) -> list[Prediction]:
        out = []
        for request in requests:
            result = self._answer(request.sample)
            if isinstance(result, Prediction):
                out.append(result)
            else:
                out.append(Prediction(sample_id=request.sample.id, answer=result))
        return out
