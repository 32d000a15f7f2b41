"""Benchmark: how long a person waits for the command line's quick answers, against a run.

Run by hand, from the project root:

    python -m bench.cli_latency [--repeats 7] [--before DIR]

Commands, each a whole process (wall from start to exit, interpreter start-up and imports
included), started in a fresh empty folder (the checkout is not on the path there: the tree is
given by PYTHONPATH) without ``PYTHONDONTWRITEBYTECODE`` (bytecode cached, as a user's Python
has it; one discarded run of each command first writes it):
- `--help`:        python -m benchreg --help
- `tasks`:         python -m benchreg tasks
- `bad value`:     python -m benchreg run.limit=abc        (exit code 2)
- `unknown task`:  python -m benchreg task=nope            (exit code 2)
- `main job`:      python -m benchreg task=molp2s/gap view=counterfactual
Checked after every run: the exit code, and that the output is the expected one (the help's
config groups, the task count, the one error line, the job's metrics.json), so a command that
failed early cannot pass as a fast one. ``--before DIR`` also runs the benchreg of another tree
(``git archive REV | tar -x -C DIR``), interleaved, for a before/after table measured in one
session. Prints the median of each command and its ratio to the main job of the same tree (the
median over repeats of the per-repeat ratio; goal for `--help`: at most 0.6x).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN = "main job"


@dataclass(frozen=True)
class Command:
    label: str
    args: tuple[str, ...]
    code: int
    done: Callable[[Path, str], bool]  # (the run's folder, its stdout + stderr) -> did its work


COMMANDS = (
    Command("--help", ("--help",), 0, lambda _, out: "== Configuration groups ==" in out),
    Command("tasks", ("tasks",), 0, lambda _, out: " tasks, 0 broken." in out),
    Command("bad value", ("run.limit=abc",), 2, lambda _, out: "bad value run.limit=" in out),
    Command("unknown task", ("task=nope",), 2, lambda _, out: "unknown task 'nope'" in out),
    Command(
        MAIN,
        ("task=molp2s/gap", "view=counterfactual"),
        0,
        lambda cwd, _: len(list(cwd.glob("outputs/runs/*/*/metrics.json"))) == 1,
    ),
)


@dataclass
class Tree:
    label: str
    root: Path
    walls: dict[str, list[float]] = field(default_factory=dict)


def run_once(tree: Tree, command: Command) -> float:
    cwd = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    env = {**os.environ, "PYTHONPATH": str(tree.root)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        tic = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "benchreg", *command.args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - tic
        if proc.returncode != command.code or not command.done(cwd, proc.stdout + proc.stderr):
            sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
            raise SystemExit(f"{tree.label}: {command.label}: exit {proc.returncode}, not done")
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    return wall


def load() -> float:
    return os.getloadavg()[0]


def table(trees: list[Tree]) -> str:
    head = f"{'command':<14}" + "".join(
        f" {t.label + ' median':>16} {t.label + ' / main':>14}" for t in trees
    )
    rows = [head]
    for command in COMMANDS:
        row = f"{command.label:<14}"
        for tree in trees:
            walls, main = tree.walls[command.label], tree.walls[MAIN]
            ratio = statistics.median(a / b for a, b in zip(walls, main, strict=True))
            row += f" {statistics.median(walls):14.3f} s {ratio:13.2f}x"
        rows.append(row)
    if len(trees) == 2:
        rows.append("")
        rows.append(f"{'command':<14} {trees[1].label + ' / ' + trees[0].label:>16}")
        for command in COMMANDS:
            a, b = (statistics.median(t.walls[command.label]) for t in trees)
            rows.append(f"{command.label:<14} {b / a:15.2f}x")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--before", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()
    trees = [Tree("before", args.before.resolve())] if args.before else []
    trees.append(Tree("after" if args.before else "this tree", ROOT))
    print(f"load average before: {load():.2f} (quiet machine: below 1.5)")
    for tree in trees:
        for command in COMMANDS:
            run_once(tree, command)  # writes the bytecode caches; not counted
    for _ in range(args.repeats):
        for tree in trees:
            for command in COMMANDS:
                tree.walls.setdefault(command.label, []).append(run_once(tree, command))
    print(f"load average after: {load():.2f}")
    print(table(trees))
    print(
        f"(medians of {args.repeats} runs, interleaved; `/ main` = median of the per-repeat "
        "ratio to the main job of the same tree; wall = whole process incl. start-up)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
