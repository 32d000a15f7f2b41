"""Shared by the bench scripts: run each side in its own process, paired, and report medians.

A side is a command line. ``{out}`` in it is replaced, for every run, by a fresh empty folder
(so no run reuses another's outputs), and the side's ``check`` is called with that folder and the
run's stdout after each run: it raises when the work was not done (jobs skipped, samples missing),
so a skipped job cannot pass as a fast one. :func:`benchreg_cli` builds the benchreg command; with
``BENCH_BENCHREG_ROOT=DIR`` it runs the benchreg of another tree (``git archive REV | tar -x -C
DIR``) for before/after tables measured in one session.

Each repeat runs every side once, in order (a pair, or a triple), so a slow spell of a shared
machine hits all sides of a repeat alike. Measured per run: whole-process wall (start to exit,
interpreter start-up and imports included) and the peak RSS of the whole process tree (the
child's own ``ru_maxrss`` from ``wait4``, and the sampled sum over its workers, bench/_rss.py).
Reported: the median of each side, and the median over repeats of the per-repeat ratio to the
reference side. Every side runs without ``PYTHONDONTWRITEBYTECODE`` (bytecode cached, as a
user's Python does by default).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
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
    check: Callable[[Path, str], object] | None = None  # raises when the work was not done
    cwd: str | None = None


def benchreg_root() -> Path:
    """The tree whose benchreg the benchreg sides run (default: this checkout)."""
    root = os.environ.get("BENCH_BENCHREG_ROOT")
    return Path(root).resolve() if root else Path(__file__).resolve().parents[1]


def benchreg_cli(*args: str) -> tuple[list[str], dict[str, str], str]:
    """``python -m benchreg ARGS`` as a user runs it: argv, env and cwd for a :class:`Side`."""
    root = benchreg_root()
    env = {"PYTHONPATH": str(root)} if os.environ.get("BENCH_BENCHREG_ROOT") else {}
    return [sys.executable, "-m", "benchreg", *args], env, str(root)


def measure(sides: Sequence[Side], repeats: int) -> None:
    """Every side once per repeat, in order; with ``BENCH_BUSY=cores`` (or a number) while
    that many spinning processes keep the CPUs busy (bench/_busy.py)."""
    from bench._busy import busy, processes_wanted

    spinners = processes_wanted()
    if spinners:
        print(f"busy machine: {spinners} spinning processes run beside every side")
    with busy(spinners):
        for _ in range(repeats):
            for side in sides:
                run_once(side)


def run_once(side: Side) -> None:
    env = side.env
    if side.setup:
        subprocess.run(list(side.setup), check=True, env={**os.environ, **env}, cwd=side.cwd)
    out_dir = Path(tempfile.mkdtemp(prefix="bench-out-"))
    try:
        argv = [a.replace("{out}", str(out_dir)) for a in side.argv]
        wall, rss, out, tree = run_child(argv, env, cwd=side.cwd)
        if side.check is not None:
            side.check(out_dir, out)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    side.walls.append(wall)
    side.rss_mib.append(rss)
    side.tree_rss_mib.append(tree)
    side.outputs.append(out)


def cold_and_warm(
    argv: Sequence[str],
    folder: Path,
    cold_label: str,
    warm_label: str,
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    check: Callable[[Path, str], object] | None = None,
) -> tuple[Side, Side]:
    """Two sides of one benchreg command: a first run (its cache folder emptied before each run)
    and a repeated run (a cache folder filled by one discarded run, made here)."""
    cold, warm = str(folder / "cache-cold"), str(folder / "cache-warm")
    first = Side(
        cold_label,
        argv,
        env={**(env or {}), "BENCHREG_CACHE_DIR": cold},
        setup=[sys.executable, "-c", f"import shutil; shutil.rmtree({cold!r}, True)"],
        check=check,
        cwd=cwd,
    )
    repeated = Side(
        warm_label, argv, env={**(env or {}), "BENCHREG_CACHE_DIR": warm}, check=check, cwd=cwd
    )
    warm_up = Side("warm-up", argv, env=repeated.env, check=check, cwd=cwd)
    run_once(warm_up)  # fills the warm cache
    return first, repeated


def run_child(
    argv: Sequence[str], env: dict[str, str], cwd: str | None = None
) -> tuple[float, float, str, float]:
    """Run ``argv`` under a tiny wrapper that reports the child's own peak RSS (and that of its
    process tree, see bench/_rss.py)."""
    bench_root = str(Path(__file__).resolve().parents[1])
    wrapper = [sys.executable, "-m", "bench._rss", *argv]
    full_env = {**os.environ, **env}
    # as a user's Python runs: bytecode cached (this workplace sets PYTHONDONTWRITEBYTECODE,
    # which recompiles every imported module at each start), for every side alike
    full_env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cwd is not None and cwd != bench_root:
        # bench._rss itself is found through PYTHONPATH; benchreg through the env's own entry
        full_env["PYTHONPATH"] = os.pathsep.join(
            p for p in (env.get("PYTHONPATH"), bench_root) if p
        )
    tic = time.perf_counter()
    proc = subprocess.run(
        wrapper, capture_output=True, text=True, env=full_env, check=False, cwd=cwd
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
        rss = statistics.median(side.tree_rss_mib)
        ratio = statistics.median(a / b for a, b in zip(side.walls, reference.walls, strict=True))
        rss_ratio = statistics.median(
            a / b for a, b in zip(side.tree_rss_mib, reference.tree_rss_mib, strict=True)
        )
        row = f"{side.label:<44} {wall:10.2f} s {rss:6.0f} MiB {ratio:10.2f}x {rss_ratio:9.2f}x"
        if per:
            row += f" {per / wall:14,.0f}"
        rows.append(row)
    rows.append(
        f"(medians of {len(reference.walls)} paired runs; ratios = median of the per-run ratio to "
        f"'{reference.label}'; wall = whole process incl. start-up; RSS = peak of the whole "
        "process tree)"
    )
    return "\n".join(rows)
