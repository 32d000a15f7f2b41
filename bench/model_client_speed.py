"""Benchmark: `python -m benchreg ... model=openai` against a batching-server stand-in, beside a
plain aiohttp loop and a plain httpx loop measured in the same run.

Run by hand, from the project root, on a quiet machine (about 10 minutes on 2 cores):

    python -m bench.model_client_speed [--prompts 2000] [--concurrency 16 64 256]
        [--latency fixed varied] [--repeats 3] [--httpx-repeats 1]

Data (a temp folder): a MolP2S data root of N records (bench/molp2s_100k.py's builder) and its
rendered prompts (`python -m benchreg ... mode=prompts`), so every side sends the same messages.

The stand-in (`python -m benchreg.systems.fake_server`, its own process, one core): unlimited
parallel requests, each answered after a fixed 100 ms (`fixed`) or after 0.1 + 2.0 u^8 s, u
seeded per prompt (`varied`: most answers fast, a few long, as with reasoning models; the same
prompt takes the same time for every side). It streams an answer asked with `stream: true` (two
parts, half the answer time apart), as vLLM does. Its own CPU per request is printed: it is not
the bottleneck.

Sides, each a whole process, paired per repeat (bench/_harness.py):
- `plain aiohttp loop`: one `aiohttp.ClientSession` (connection limit = concurrency), that many
  workers pulling the next prompt as soon as they are free, the body parsed to the answer text;
- `plain httpx loop`: the same with one `httpx.AsyncClient` (max_connections = concurrency);
  run `--httpx-repeats` times only (its pool costs O(connections^2): about 45 s at 256);
- `benchreg`: the documented command with its default options (`model=openai
  model.base_url=... model.model=fake model.concurrency=C`, response cache read_write into an
  empty cache folder, journal, progress lines, the endpoint check), every run checked: all N
  answers ok and exactly N chat requests reached the server (no retry, no duplicate).

Printed per latency profile and concurrency: requests per second over the answering phase (a
loop's own timing; benchreg's `seconds.predict` in metrics.json, which includes rendering the
prompts, the cache and the journal), the ratio to the fastest plain loop (median over repeats
of the per-repeat ratio), client CPU per request over that phase (`time.process_time`; benchreg's
`seconds.predict_cpu`), and the whole process's wall (start-up, imports, scoring and writing
included).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PROFILES = {
    "fixed": ["--latency-s", "0.1"],
    "varied": ["--latency-s", "0.1", "--latency-spread-s", "2.0", "--seed", "0"],
}
BODY = {"model": "fake", "temperature": 0.0, "max_tokens": 1024, "seed": 0}
LABELS = {"aiohttp": "plain aiohttp", "httpx": "plain httpx", "benchreg": "benchreg"}


# --- the plain loops (run as `python -m bench.model_client_speed --side aiohttp|httpx ...`) -----


def _bodies(path: Path) -> list[bytes]:
    import orjson

    messages = json.loads(path.read_text("utf-8"))
    return [orjson.dumps({**BODY, "messages": m}) for m in messages]


async def aiohttp_loop(url: str, bodies: Sequence[bytes], concurrency: int) -> dict[str, Any]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=concurrency)
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=connector) as session:
        todo = iter(bodies)
        texts: list[str] = []

        async def worker() -> None:
            for body in todo:
                async with session.post(url, data=body, headers=headers) as response:
                    response.raise_for_status()
                    texts.append((await response.json())["choices"][0]["message"]["content"])

        return await _timed(worker, concurrency, texts)


async def httpx_loop(url: str, bodies: Sequence[bytes], concurrency: int) -> dict[str, Any]:
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Content-Type": "application/json"}
    async with httpx.AsyncClient(limits=limits, timeout=600) as client:
        todo = iter(bodies)
        texts: list[str] = []

        async def worker() -> None:
            for body in todo:
                response = await client.post(url, content=body, headers=headers)
                response.raise_for_status()
                texts.append(response.json()["choices"][0]["message"]["content"])

        return await _timed(worker, concurrency, texts)


async def _timed(worker: Any, concurrency: int, texts: list[str]) -> dict[str, Any]:
    tic, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds, cpu_s = time.perf_counter() - tic, time.process_time() - cpu
    return {"seconds": seconds, "cpu_s": cpu_s, "answers": sum(1 for t in texts if t)}


def side_main(argv: Sequence[str]) -> None:
    kind, base_url, bodies_path, concurrency = argv
    bodies = _bodies(Path(bodies_path))
    loop = aiohttp_loop if kind == "aiohttp" else httpx_loop
    url = base_url + "/chat/completions"
    print(json.dumps(asyncio.run(loop(url, bodies, int(concurrency)))))


# --- the bench ----------------------------------------------------------------------------------


def prepare_data(folder: Path, n: int) -> tuple[Path, Path]:
    """The data root and the rendered prompts (a JSON list of each sample's messages)."""
    from bench._harness import benchreg_cli
    from bench.molp2s_100k import build

    root, _, _ = build(folder, n)
    argv, env, cwd = benchreg_cli(
        "task=molp2s/gap", f"roots.molp2s={root}", "mode=prompts", f"hydra.run.dir={folder}/p"
    )
    subprocess.run(argv, env={**os.environ, **env}, cwd=cwd, check=True, capture_output=True)
    rows = [json.loads(x) for x in (folder / "p" / "prompts.jsonl").read_text().splitlines()]
    bodies = folder / "messages.json"
    bodies.write_text(json.dumps([r["messages"] for r in rows], ensure_ascii=False), "utf-8")
    if len(rows) != n:
        raise AssertionError(f"{len(rows)} prompts rendered, {n} wanted")
    return root, bodies


class StandIn:
    """The stand-in server in its own process; its CPU time read from /proc."""

    def __init__(self, profile: str) -> None:
        args = [sys.executable, "-m", "benchreg.systems.fake_server", "--lifetime-s", "3600"]
        self.proc = subprocess.Popen([*args, *PROFILES[profile]], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        port = int(self.proc.stdout.readline().split()[1])
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def chat_requests(self) -> int:
        with urllib.request.urlopen(self.base_url + "/stats", timeout=10) as response:
            return int(json.load(response).get("chat", 0))

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def _sides(args: argparse.Namespace, server: StandIn, root: Path, bodies: Path, c: int) -> Any:
    from bench._harness import Side, benchreg_cli

    phases: dict[str, list[dict[str, Any]]] = {"aiohttp": [], "httpx": [], "benchreg": []}
    n = args.prompts

    def loop_check(kind: str) -> Any:
        def check(_out: Path, stdout: str) -> None:
            phase = json.loads(stdout.strip().splitlines()[-1])
            if phase["answers"] != n:
                raise AssertionError(f"{kind} loop: {phase['answers']} answers of {n}")
            phases[kind].append(phase)

        return check

    before = [0]

    def reset() -> None:
        before[0] = server.chat_requests()

    def benchreg_check(out: Path, _stdout: str) -> None:
        metrics = json.loads((out / "run" / "metrics.json").read_text("utf-8"))
        asked = server.chat_requests() - before[0]
        if metrics["statuses"].get("ok") != n or asked != n:
            raise AssertionError(f"benchreg: statuses {metrics['statuses']}, {asked} requests")
        seconds = metrics["seconds"]
        phases["benchreg"].append({"seconds": seconds["predict"], "cpu_s": seconds["predict_cpu"]})

    me = [sys.executable, "-m", "bench.model_client_speed", "--side"]
    argv, env, cwd = benchreg_cli(
        "task=molp2s/gap",
        f"roots.molp2s={root}",
        "model=openai",
        f"model.base_url={server.base_url}",
        "model.model=fake",
        f"model.concurrency={c}",
        "hydra.run.dir={out}/run",
    )
    cache = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    wipe = [sys.executable, "-c", f"import shutil; shutil.rmtree({str(cache)!r}, True)"]
    sides = {
        "aiohttp": Side(
            "plain aiohttp loop",
            [*me, "aiohttp", server.base_url, str(bodies), str(c)],
            check=loop_check("aiohttp"),
        ),
        "httpx": Side(
            "plain httpx loop",
            [*me, "httpx", server.base_url, str(bodies), str(c)],
            check=loop_check("httpx"),
        ),
        "benchreg": Side(
            "benchreg (default options)",
            argv,
            env={**env, "BENCHREG_CACHE_DIR": str(cache)},
            setup=wipe,
            check=benchreg_check,
            cwd=cwd,
        ),
    }
    return sides, phases, reset


def measure_cell(
    args: argparse.Namespace, server: StandIn, root: Path, bodies: Path, c: int
) -> dict[str, Any]:
    """Every side at concurrency ``c``: the answering phases and the whole-process walls."""
    from bench._harness import run_once

    sides, phases, reset = _sides(args, server, root, bodies, c)
    cpu = server.cpu_s()
    requests = server.chat_requests()
    for repeat in range(args.repeats):
        run_once(sides["aiohttp"])
        if repeat < args.httpx_repeats:
            run_once(sides["httpx"])
        reset()
        run_once(sides["benchreg"])
    served = server.chat_requests() - requests
    server_ms = (server.cpu_s() - cpu) / max(1, served) * 1000
    walls = {k: statistics.median(s.walls) for k, s in sides.items() if s.walls}
    return {"phases": phases, "walls": walls, "server_ms": server_ms}


def rows_of(cell: dict[str, Any], n: int) -> list[list[str]]:
    phases, walls = cell["phases"], cell["walls"]
    rate = {k: [n / p["seconds"] for p in v] for k, v in phases.items() if v}
    fastest = max(statistics.median(rate["aiohttp"]), statistics.median(rate.get("httpx", [0])))
    rows = []
    for kind, label in LABELS.items():
        if kind not in rate:
            continue
        cpu = statistics.median(p["cpu_s"] / n * 1000 for p in phases[kind])
        ratios = [r / fastest for r in rate[kind]]
        rows.append(
            [
                label,
                f"{statistics.median(rate[kind]):,.0f}",
                f"{statistics.median(ratios):.2f}",
                f"{min(ratios):.2f}",
                f"{cpu:.2f}",
                f"{walls[kind]:.2f} s",
                str(len(rate[kind])),
            ]
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--latency", nargs="+", default=list(PROFILES), choices=list(PROFILES))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--httpx-repeats", type=int, default=1)
    args = parser.parse_args()
    header = ["side", "req/s", "ratio", "min ratio", "CPU ms/req", "process wall", "runs"]
    with tempfile.TemporaryDirectory() as tmp:
        root, bodies = prepare_data(Path(tmp), args.prompts)
        for profile in args.latency:
            server = StandIn(profile)
            try:
                for c in args.concurrency:
                    cell = measure_cell(args, server, root, bodies, c)
                    print(
                        f"\n{profile} latency, concurrency {c}, {args.prompts:,} MolP2S prompts; "
                        f"stand-in CPU {cell['server_ms']:.2f} ms/request; ratio = req/s over "
                        "the fastest plain loop's (median, and the lowest, of the repeats)"
                    )
                    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
                    for row in rows_of(cell, args.prompts):
                        print("| " + " | ".join(row) + " |", flush=True)
            finally:
                server.stop()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--side"]:
        side_main(sys.argv[2:])
        sys.exit(0)
    sys.exit(main())
