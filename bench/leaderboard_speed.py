"""Benchmark: `python -m benchreg leaderboard` over 10,000 run folders.

Run by hand, from the project root:

    python -m bench.leaderboard_speed [--runs 10000] [--repeats 5]

The run folders are copies of a real sweep's job folders (the MolP2S gap sweep of the baseline
and random models on two views, run once here on the embedded sample), written into a temp folder
with varied identities: `--runs` / 4 checkpoints x data variants, each copy with its own
`model_id` (checkpoint k of its model) and its own data sha256 (variant j), laid out as a lab's
outputs are: sweeps of four jobs under dated folders. So the table has 100 models x 100 columns
at 10,000 runs, one run per cell.

Sides, each a whole process (wall from start to exit, peak RSS of the process tree, see
bench/_harness.py), paired, every run into a fresh output folder:
- `floor`:       a stdlib script that walks the same tree and json-loads every metrics.json and
  provenance.json (the files the leaderboard reads), and does nothing else;
- `leaderboard`: python -m benchreg leaderboard ROOT --out {out}.
Checked after every leaderboard run: leaderboard.csv holds one result cell per run. Prints both
and the ratio (median over repeats of the per-repeat ratio to the floor).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench._harness import Side, benchreg_cli, measure, report

FLOOR = """
import json, os, sys
count = 0
for top, dirs, files in os.walk(sys.argv[1]):
    if "metrics.json" in files:
        for name in ("metrics.json", "provenance.json"):
            with open(os.path.join(top, name), "rb") as handle:
                json.load(handle)
        count += 1
        dirs[:] = []
print(count)
"""
FILES = ("metrics.json", "provenance.json", "run.json", "samples.jsonl")


def real_jobs(work: Path) -> list[dict[str, Any]]:
    """The files of the four jobs of a real sweep, run here on the embedded sample."""
    sweep = work / "source"
    argv, env, cwd = benchreg_cli(
        "-m",
        "task=molp2s/gap",
        "view=counterfactual,correct",
        "model=baseline,random",
        f"hydra.sweep.dir={sweep}",
    )
    subprocess.run(argv, env={**os.environ, **env}, cwd=cwd, check=True, capture_output=True)
    jobs = []
    for folder in sorted(p for p in sweep.iterdir() if (p / "metrics.json").is_file()):
        jobs.append({name: (folder / name).read_text("utf-8") for name in FILES})
    return jobs


def varied(job: dict[str, Any], checkpoint: int, variant: int) -> dict[str, str]:
    """A copy of ``job`` as checkpoint ``checkpoint`` of its model, on data variant ``variant``."""
    metrics = json.loads(job["metrics.json"])
    identity = f"{metrics['model_id']}@ckpt-{checkpoint:03d}"
    metrics["model"] = metrics["model_id"] = identity
    data = metrics["sha256"]["data"]
    for name in data:
        data[name] = f"{variant:06d}" + data[name][6:]
    return {**job, "metrics.json": json.dumps(metrics, indent=2)}


def write_tree(root: Path, jobs: list[dict[str, Any]], runs: int) -> int:
    """``runs`` run folders under ``root`` (rounded down to whole sweeps of the four jobs)."""
    side = max(1, int((runs / len(jobs)) ** 0.5))
    written = 0
    for checkpoint in range(side):
        for variant in range(side):
            sweep = root / f"2026-12-{1 + variant % 28:02d}" / f"ckpt{checkpoint}_data{variant}"
            for number, job in enumerate(jobs):
                folder = sweep / f"{number:03d}_job"
                folder.mkdir(parents=True)
                for name, text in varied(job, checkpoint, variant).items():
                    (folder / name).write_text(text, "utf-8")
                written += 1
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-leaderboard-"))
    try:
        root = work / "outputs"
        written = write_tree(root, real_jobs(work), args.runs)
        print(f"{written:,} run folders under {root}")

        def check(out: Path, stdout: str) -> None:
            with (out / "leaderboard.csv").open(encoding="utf-8") as handle:
                cells = [row for row in csv.DictReader(handle) if row["state"] == "result"]
            if len(cells) != written:
                raise AssertionError(f"{len(cells)} result cells, expected {written}")

        def check_floor(out: Path, stdout: str) -> None:
            if int(stdout.strip()) != written:
                raise AssertionError(f"the floor read {stdout.strip()} runs, not {written}")

        argv, env, cwd = benchreg_cli("leaderboard", str(root), "--out", "{out}")
        board = Side("leaderboard", argv, env=env, cwd=cwd, check=check)
        floor = Side("floor (json-load the same files)", [sys.executable, "-c", FLOOR, str(root)])
        floor.check = check_floor
        measure([floor, board], args.repeats)
        print(report([floor, board], floor, per=written, unit="runs"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
