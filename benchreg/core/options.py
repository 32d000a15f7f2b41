"""The options of one run (`run.*` on the command line), the same for every family."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class RunOptions:
    batch_size: int = 64
    limit: int | None = None
    n_boot: int = 1000
    seed: int = 0
    progress: bool = True
    cache: str = "read_write"  # model response cache: read_write | read_only | off
    cache_dir: str | None = None  # None: the default cache folder (see benchreg.systems)
    data_cache: bool = True  # loaded data kept for the next run on the same files (core.load)
    overwrite: bool = False  # replace a run folder that holds another (or a finished) run
    final: bool = False  # a final-acceptance run: the views a task declares frozen may be read
    # failed requests (status `error`) scored as wrong answers and the run marked complete;
    # without it a run with any failed request is incomplete (resumable, exit code 2)
    accept_errors: bool = False
    # ask each sample k times (distinct cache entries and seeds); scored per repeat, with the
    # mean, majority vote and pass@k beside the first repeat's metrics
    repeats: int = 1
    # a budget: the run stops (resumable) once this many tokens, or this cost, are spent;
    # prices per million tokens (the cost is reported with them, with or without a limit)
    max_tokens_total: int | None = None
    max_cost: float | None = None
    price_prompt_per_1m: float | None = None
    price_completion_per_1m: float | None = None

    def result_options(self) -> dict[str, Any]:
        """The options that change a run's results (part of its fingerprint; a budget does not:
        a run stopped by it goes on in the same folder with a larger one)."""
        out = {"limit": self.limit, "n_boot": self.n_boot, "seed": self.seed, "final": self.final}
        if self.repeats != 1:
            out["repeats"] = self.repeats
        return out


DEFAULT_OPTIONS = RunOptions()
