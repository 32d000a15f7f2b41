"""Shared by the bench scripts: run each side in its own process, paired, and report medians.

A side is a command line. Each repeat runs every side once, in order (a pair, or a triple), so a
slow spell of a shared machine hits all sides of a repeat alike. Measured per run: whole-process
wall (start to exit, interpreter start-up and imports included) and the process's peak RSS
(``ru_maxrss`` of that child alone, read with ``wait4``). Reported: the median of each side, and
the median over repeats of the per-repeat ratio to the reference side.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Side:
    label: str
    argv: Sequence[str]
    env: dict[str, str] = field(default_factory=dict)
    setup: Sequence[str] | None = None  # a command run (untimed) before each run of this side
    walls: list[float] = field(default_factory=list)
    rss_mib: list[float] = field(default_factory=list)
    tree_rss_mib: list[float] = field(default_factory=list)  # with worker processes (sampled)
    outputs: list[str] = field(default_factory=list)


def measure(sides: Sequence[Side], repeats: int) -> None:
    for _ in range(repeats):
        for side in sides:
            if side.setup:
                subprocess.run(list(side.setup), check=True, env={**os.environ, **side.env})
            wall, rss, out, tree = run_child(side.argv, side.env)
            side.walls.append(wall)
            side.rss_mib.append(rss)
            side.tree_rss_mib.append(tree)
            side.outputs.append(out)


def cold_and_warm(
    argv: Sequence[str], folder: Path, cold_label: str, warm_label: str
) -> tuple[Side, Side]:
    """Two sides of one benchreg command: a first run (its cache folder emptied before each run)
    and a repeated run (a cache folder filled by one discarded run, made here)."""
    cold, warm = str(folder / "cache-cold"), str(folder / "cache-warm")
    first = Side(
        cold_label,
        argv,
        env={"BENCHREG_CACHE_DIR": cold},
        setup=[sys.executable, "-c", f"import shutil; shutil.rmtree({cold!r}, True)"],
    )
    repeated = Side(warm_label, argv, env={"BENCHREG_CACHE_DIR": warm})
    run_child(repeated.argv, repeated.env)  # fills the warm cache
    return first, repeated


def run_child(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float, str, float]:
    """Run ``argv`` under a tiny wrapper that reports the child's own peak RSS (and that of its
    process tree, see bench/_rss.py)."""
    wrapper = [sys.executable, "-m", "bench._rss", *argv]
    tic = time.perf_counter()
    proc = subprocess.run(
        wrapper, capture_output=True, text=True, env={**os.environ, **env}, check=False
    )
    wall = time.perf_counter() - tic
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-4000:])
        raise SystemExit(f"{' '.join(argv)} failed with exit code {proc.returncode}")
    lines = proc.stderr.strip().splitlines()
    info = json.loads(lines[-1])
    own = info["peak_rss_mib"]
    return info.get("wall", wall), own, proc.stdout, info.get("tree_peak_rss_mib") or own


def report(
    sides: Sequence[Side], reference: Side, *, per: int | None = None, unit: str = ""
) -> str:
    rows = []
    head = f"{'side':<44} {'median wall':>12} {'peak RSS':>10} {'wall ratio':>11} {'RSS ratio':>10}"
    if per:
        head += f" {unit + '/s':>14}"
    rows.append(head)
    for side in sides:
        wall = statistics.median(side.walls)
        rss = statistics.median(side.rss_mib)
        ratio = statistics.median(a / b for a, b in zip(side.walls, reference.walls, strict=True))
        rss_ratio = statistics.median(
            a / b for a, b in zip(side.rss_mib, reference.rss_mib, strict=True)
        )
        row = f"{side.label:<44} {wall:10.2f} s {rss:6.0f} MiB {ratio:10.2f}x {rss_ratio:9.2f}x"
        if per:
            row += f" {per / wall:14,.0f}"
        rows.append(row)
    rows.append(
        f"(medians of {len(reference.walls)} paired runs; ratios = median of the per-run ratio to "
        f"'{reference.label}'; wall = whole process incl. start-up)"
    )
    return "\n".join(rows)
