"""Benchmark: the basic launcher vs `hydra/launcher=joblib` (2 workers) on sweeps where jobs are
heavy enough for parallel processes to pay off.

Run by hand from the project root (needs the `launchers` and `models` extras):

    python -m bench.sweep_parallel [--repeats 2] [--latency-s 0.25] [--only latency|large]

- latency-bound: 8 MolP2S tasks (view correct, 16 samples each) run with `model=openai` against
  the local fake OpenAI-compatible server (benchreg.systems.fake_server, 127.0.0.1, fixed latency
  per request), `model.concurrency=2`, a fresh response cache per sweep (`run.cache_dir`, shared
  by the parallel jobs), so every job waits on the server, not on the CPU;
- large data: the 45 task-views (15 directories x correct, shuffled, counterfactual) of a
  reference-size MolP2S release (5,742 records, written by builders/molp2s) with the baseline.

Each sweep is the real CLI in a subprocess (`python -m benchreg -m ...`, its Python start
included). Prints wall time (best of --repeats, launchers alternated so that caches and the
machine state favour neither), CPU time of the process tree, and the ratio basic / joblib
(> 1: joblib is faster).

Measured on the 2-core dev machine (shared with other test runs, best of 2):
- latency-bound (250 ms, 8 jobs): basic 21.2 s, joblib(2) 15.3 s wall -> 1.39x faster
  (an earlier run: 25.8 vs 19.7 s, 1.31x); CPU 1.5x of basic (worker starts);
- large data (45 jobs, 5,742 records; RDKit checks cached after the first load): basic 16.9 s,
  joblib(2) 21.5 s wall -> 0.79x (an earlier, noisier run: 0.58x); CPU 1.4x of basic. Each job
  is ~0.2 s of CPU here, less than a worker's Python start and the pickled job: on 2 cores the
  basic launcher wins until jobs cost several seconds each.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LATENCY_TASKS = (
    "gap",
    "dipole",
    "raman",
    "infrared",
    "electronic",
    "vibrational",
    "carbon_nmr_atom",
    "proton_nmr_atom",
)
LAUNCHERS = {"basic": [], "joblib(2)": ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]}


def run_sweep(args: list[str], sweep: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    tic = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "benchreg", "-m", *args, f"hydra.sweep.dir={sweep}"],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - tic
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(
            f"sweep failed ({proc.returncode}): {' '.join(args)}\n{proc.stderr[-3000:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def compare(name: str, make_args, repeats: int, tmp: Path) -> None:
    best: dict[str, tuple[float, float]] = {}
    for r in range(repeats):
        for launcher, extra in LAUNCHERS.items():
            label = launcher.replace("(", "").replace(")", "")
            wall, cpu = run_sweep(
                [*make_args(tmp / f"cache_{label}_{r}"), *extra], tmp / f"{name}_{label}_{r}"
            )
            if launcher not in best or wall < best[launcher][0]:
                best[launcher] = (wall, cpu)
            print(
                f"  {name:<14} {launcher:<10} run {r + 1}: wall {wall:6.1f} s  cpu {cpu:6.1f} s",
                flush=True,
            )
    (bw, bc), (jw, jc) = best["basic"], best["joblib(2)"]
    print(
        f"{name}: basic {bw:.1f} s wall / {bc:.1f} s cpu; joblib(2) {jw:.1f} s wall / "
        f"{jc:.1f} s cpu; wall ratio basic/joblib = {bw / jw:.2f}x; cpu ratio joblib/basic = "
        f"{jc / bc:.2f}x",
        flush=True,
    )


def start_server(latency: float) -> tuple[subprocess.Popen, int]:
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchreg.systems.fake_server",
            "--latency-s",
            str(latency),
            "--lifetime-s",
            "1800",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline().split()
    return server, int(line[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--latency-s", type=float, default=0.25)
    parser.add_argument("--only", choices=("latency", "large"), default=None)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; best of {args.repeats} runs each", flush=True)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if args.only in (None, "latency"):
            server, port = start_server(args.latency_s)
            try:
                # the system as a config of its own (model=fake_server on the search path)
                from benchreg.core.resources import conf_dir

                text = (conf_dir() / "model" / "openai.yaml").read_text()
                text = text.replace(
                    "base_url: http://127.0.0.1:8000/v1", f"base_url: http://127.0.0.1:{port}/v1"
                )
                text = text.replace("model: ???", "model: fake").replace(
                    "concurrency: 8", "concurrency: 2"
                )
                (tmp / "conf" / "model").mkdir(parents=True)
                (tmp / "conf" / "model" / "fake_server.yaml").write_text(text)

                def latency_args(cache: Path) -> list[str]:
                    return [
                        f"task={','.join('molp2s/' + t for t in LATENCY_TASKS)}",
                        "view=correct",
                        "model=fake_server",
                        f"hydra.searchpath=[file://{tmp / 'conf'}]",
                        f"run.cache_dir={cache}",
                        "run.bootstrap=0",
                    ]

                print(
                    f"latency-bound: {len(LATENCY_TASKS)} jobs x 16 samples, "
                    f"{args.latency_s * 1000:.0f} ms per request, concurrency 2",
                    flush=True,
                )
                compare("latency-bound", latency_args, args.repeats, tmp)
            finally:
                server.terminate()
                server.wait()
        if args.only in (None, "large"):
            from builders.molp2s import generate

            release = tmp / "release"
            generate.generate_release(
                release,
                n_records=generate.REFERENCE_RECORDS,
                counterfactual_sizes=generate.REFERENCE_COUNTERFACTUAL,
                seed=0,
            )
            print("large data: 45 jobs on the reference-size release (5,742 records)", flush=True)
            compare(
                "large-data",
                lambda cache: [
                    "task=glob(molp2s/*)",
                    "view=correct,shuffled,counterfactual",
                    f"roots.molp2s={release}",
                ],
                args.repeats,
                tmp,
            )


if __name__ == "__main__":
    main()
