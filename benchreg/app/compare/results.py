"""What a comparison found: one row per task and view, the release gate when asked for."""

from __future__ import annotations

from dataclasses import dataclass, field

ALPHA = 0.05


@dataclass
class TaskComparison:
    task: str
    view: str | None
    metric: str
    n_pairs: int
    only_a: int
    only_b: int
    mean_a: float | None = None
    mean_b: float | None = None
    ci95_a: tuple[float, float] | None = None  # of mean A over the pairs (Wilson for 0/1 scores)
    ci95_b: tuple[float, float] | None = None
    difference: float | None = None
    ci95: tuple[float, float] | None = None
    sd_difference: float | None = None  # sd of the paired differences (n - 1)
    test: str = ""
    p: float | None = None
    p_holm: float | None = None
    significant: bool = False
    discordant: tuple[int, int] | None = None  # McNemar: (A right only, B right only)
    mde: float | None = None  # two-sided at alpha, 80% power, at n_pairs
    note: str = ""

    @property
    def label(self) -> str:
        return f"{self.task} [{self.view}]" if self.view else self.task

    def add_note(self, text: str) -> None:
        self.note = f"{self.note}; {text}" if self.note else text


@dataclass
class GateTask:
    """One task's one-sided test that B is worse than A by more than the margin."""

    task: str
    view: str | None
    test: str
    n_pairs: int
    b_minus_a: float
    statistic: float | None
    p: float
    p_holm: float = 1.0
    regression: bool = False  # Holm p < alpha: B shown worse than A by more than the margin
    mde: float | None = None  # one-sided at alpha, 80% power, at n_pairs
    underpowered: bool = False  # no regression shown, and its MDE exceeds the margin (or is None)
    note: str = ""

    @property
    def label(self) -> str:
        return f"{self.task} [{self.view}]" if self.view else self.task


@dataclass
class Gate:
    margin: float
    alpha: float
    verdict: str  # "GO", "NO-GO" or "INCOMPLETE" (some task could not be gated)
    method: str
    rows: list[GateTask] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)
    underpowered: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    a: str
    b: str
    rows: list[TaskComparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    alpha: float = ALPHA
    n_boot: int = 2000
    gate: Gate | None = None
