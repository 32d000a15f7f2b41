"""What a run produced: the samples, the system's answers after parsing, scores and counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchreg.core.metric import MetricValue
from benchreg.core.spec import TaskSpec
from benchreg.core.system import SystemReport
from benchreg.core.task import Task
from benchreg.core.types import Dataset, Prediction, Sample
from benchreg.core.validation import Finding


@dataclass(slots=True)
class RunResult:
    task: Task
    view: str | None
    system_name: str  # display name (`model.label` when given)
    system_identity: str  # tells two models apart in a sweep (never the label)
    data_root: Path
    dataset: Dataset
    samples: list[Sample]
    predictions: list[Prediction]
    metrics: dict[str, MetricValue]  # output name -> value, n, denominator, CI
    primary: str  # output name of the primary metric
    per_sample: dict[str, Any]  # output name -> per-sample scores, where they exist
    statuses: dict[str, int]  # the shared status counts (they sum to n)
    counts: dict[str, int]  # the family's own counts
    system_report: SystemReport = field(default_factory=SystemReport)
    findings: list[Finding] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    # False when a sample's request failed (status `error`) and errors were not accepted: the
    # numbers are not a result until the failed samples are asked again
    # the metrics with degraded answers counted as invalid (None: no answer was degraded)
    strict: dict[str, MetricValue] | None = None
    complete: bool = True
    errors_accepted: bool = False  # `run.accept_errors=true` scored failed requests as wrong
    # every failed request of the run, in any repeat (`run.repeats`): a later repeat's failure
    # feeds the mean, pass@k and majority as a wrong answer, so it leaves the run incomplete too
    failed: list[Prediction] = field(default_factory=list)
    requests: int = 0  # the requests the run holds: samples x repeats (0: not counted)
    stopped: str | None = None  # why a spent budget stopped the run (incomplete whatever is set)
    # what rankings that read no text score on the same samples (core/floors.py), shown
    # beside the system's metrics; {} when the family registers no floors
    floor: dict[str, Any] = field(default_factory=dict)
    # the answers were read from the run's inputs (a predictions file) or made from them (a
    # baseline): samples.jsonl keeps a preview of long answers, not a second copy
    answers_from_inputs: bool = False

    @property
    def errors(self) -> int:
        """Failed requests in every repeat (repeat 0's statuses when they were not counted)."""
        return len(self.failed) if self.requests else self.statuses.get("error", 0)

    @property
    def spec(self) -> TaskSpec:
        return self.task.spec
