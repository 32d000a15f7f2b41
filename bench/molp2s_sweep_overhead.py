"""Benchmark: per-job overhead of a sweep: the 45-job MolP2S sweep vs one job, on the CLI.

Run by hand, from the project root:

    python -m bench.molp2s_sweep_overhead [--repeats 3]

Sides, each in its own process (whole-process wall and peak RSS, see bench/_harness.py), on the
embedded sample, outputs in a temp folder, one shared validation cache (warmed by a first,
discarded run of each side, as on a user's machine after the first run):
- `one job`:   python -m benchreg task=molp2s/gap view=counterfactual
- `45 jobs`:   python -m benchreg -m 'task=glob(molp2s/*)' view=correct,shuffled,counterfactual
Prints both and the ratio (goal: the sweep <= 4x one job), and the per-job overhead
(sweep - one job) / 44.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from bench._harness import Side, measure, report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out, env = Path(tmp), {"BENCHREG_CACHE_DIR": str(Path(tmp) / "cache")}
        cli = [sys.executable, "-m", "benchreg"]
        sides = [
            Side("one job (reference)", [*cli, "task=molp2s/gap", "view=counterfactual",
                                         f"hydra.run.dir={out}/run", "run.overwrite=true"],
                 env=env),
            Side("45-job sweep", [*cli, "-m", "task=glob(molp2s/*)",
                                  "view=correct,shuffled,counterfactual",
                                  f"hydra.sweep.dir={out}/sweep", "run.overwrite=true"],
                 env=env),
        ]
        measure(sides, 1)  # warm-up (validation cache, file system), discarded
        for side in sides:
            side.walls.clear()
            side.rss_mib.clear()
        measure(sides, args.repeats)
    one, sweep = (statistics.median(s.walls) for s in sides)
    print("MolP2S embedded sample: 45-job sweep vs one job (CLI, outputs written)")
    print(report(sides, sides[0]))
    print(f"per-job overhead of the sweep: {(sweep - one) / 44 * 1000:.0f} ms per extra job")
    return 0


if __name__ == "__main__":
    sys.exit(main())
