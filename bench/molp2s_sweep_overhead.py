"""Benchmark: per-job overhead of a sweep: the 45-job MolP2S sweep vs one job, on the CLI.

Run by hand, from the project root:

    python -m bench.molp2s_sweep_overhead [--repeats 5]

With ``BENCH_BENCHREG_ROOT=DIR`` both sides run the benchreg of another tree (see
bench/_harness.py), for before/after tables measured in one session.

Sides, each a whole process (wall from start to exit, peak RSS of the process tree, see
bench/_harness.py), paired, on the embedded sample, every run into a fresh output folder
(``{out}``: no job is ever kept from an earlier run), one shared validation cache (warmed by a
first, discarded run of each side, as on a user's machine after the first run):
- `one job`:   python -m benchreg task=molp2s/gap view=counterfactual hydra.run.dir={out}/run
- `45 jobs`:   python -m benchreg -m 'task=glob(molp2s/*)' view=correct,shuffled,counterfactual
  hydra.sweep.dir={out}/sweep
Checked after every run: the one job wrote its metrics.json with every sample scored; the sweep
ran 45 jobs (45 job folders, each with a complete metrics.json, none "already finished"). The
one job's numbers are checked equal to the same job inside the sweep. Prints both and the ratio
(goal: the sweep <= 3x one job), and the per-job overhead (sweep - one job) / 44.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench._harness import Side, benchreg_cli, measure, report

N_JOBS = 45
KEPT = "already finished"


def scored(metrics_file: Path) -> dict[str, Any]:
    """The primary metric of a finished run, after checking it scored all its samples."""
    metrics = json.loads(metrics_file.read_text("utf-8"))
    primary = metrics["metrics"][metrics["primary"]]
    if not metrics["complete"] or not metrics["n"] or primary["denominator"] != metrics["n"]:
        raise AssertionError(f"{metrics_file}: not every sample scored ({primary})")
    return {"task": metrics["task"], "view": metrics["view"], **primary}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    one_job: list[dict[str, Any]] = []
    in_sweep: list[dict[str, Any]] = []

    def check_one(out: Path, stdout: str) -> None:
        if KEPT in stdout:
            raise AssertionError("the job was kept from an earlier run, not run")
        one_job.append(scored(out / "run" / "metrics.json"))

    def check_sweep(out: Path, stdout: str) -> None:
        if KEPT in stdout:
            raise AssertionError("a job was kept from an earlier sweep, not run")
        jobs = [p for p in (out / "sweep").iterdir() if (p / "run.json").is_file()]
        if len(jobs) != N_JOBS:
            raise AssertionError(f"{len(jobs)} jobs ran, expected {N_JOBS}")
        found = [scored(job / "metrics.json") for job in jobs]
        in_sweep.extend(
            r for r in found if (r["task"], r["view"]) == ("molp2s/gap", "counterfactual")
        )

    with tempfile.TemporaryDirectory() as tmp:
        env = {"BENCHREG_CACHE_DIR": str(Path(tmp) / "cache")}
        one_argv, one_env, cwd = benchreg_cli(
            "task=molp2s/gap", "view=counterfactual", "hydra.run.dir={out}/run"
        )
        sweep_argv, sweep_env, _ = benchreg_cli(
            "-m",
            "task=glob(molp2s/*)",
            "view=correct,shuffled,counterfactual",
            "hydra.sweep.dir={out}/sweep",
        )
        sides = [
            Side("one job (reference)", one_argv, env={**one_env, **env}, cwd=cwd, check=check_one),
            Side("45-job sweep", sweep_argv, env={**sweep_env, **env}, cwd=cwd, check=check_sweep),
        ]
        measure(sides, 1)  # warm-up (validation cache, file system), discarded
        for side in sides:
            side.walls.clear()
            side.rss_mib.clear()
            side.tree_rss_mib.clear()
            side.outputs.clear()
        measure(sides, args.repeats)
    values = {json.dumps(r, sort_keys=True) for r in one_job + in_sweep}
    if len(values) != 1:
        raise AssertionError(f"the one job and the same job in the sweep differ: {values}")
    one, sweep = (statistics.median(s.walls) for s in sides)
    print(
        f"MolP2S embedded sample: 45-job sweep vs one job (CLI, outputs written); {N_JOBS} "
        "jobs ran in every sweep; molp2s/gap counterfactual equal in both"
    )
    print(report(sides, sides[0]))
    print(f"per-job overhead of the sweep: {(sweep - one) / 44 * 1000:.0f} ms per extra job")
    return 0


if __name__ == "__main__":
    sys.exit(main())
