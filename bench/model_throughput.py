"""Benchmark: model=openai throughput against a plain asyncio+httpx load generator, and the cache.

Run by hand: `python bench/model_throughput.py [--latency-s 0.05] [--repeats 3]` (needs the
`models` extra). A deterministic fake OpenAI-compatible server (benchreg.systems.fake_server)
runs in a subprocess on 127.0.0.1 and answers every request after a fixed latency.

- At concurrency 1, 8 and 64 (bounded request counts), completed requests per second of
  benchreg's `openai` system, every request handed over in one call as the core hands them to a
  model system (cache off), divided by those of a plain load generator: one httpx.AsyncClient, a
  semaphore, the same request bodies (bench/model_client_speed.py compares the whole process
  with aiohttp and httpx loops). Best of `--repeats` for each side (the machine may be shared).
  Goal: >= 0.9.
- Warm cache: a cold run of the concurrency-64 set into an empty cache, then the same run again;
  the wall-time ratio cold / warm and the requests the warm run made (goal: 0 requests, >= 20x).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from benchreg import load_task
from benchreg.core import registry
from benchreg.core.system import SystemContext, check_answers
from benchreg.core.types import Message, Request, Sample

SIZES = {1: 100, 8: 400, 64: 1920}  # requests per concurrency (~5 s, ~2.5 s, ~1.5 s at 50 ms)


def make_requests(n: int, tag: str) -> list[Request]:
    return [
        Request(Sample(f"{tag}{i}", {}, 0), (Message("user", f"{tag} prompt {i}"),))
        for i in range(n)
    ]


def _body(request: Request) -> dict[str, Any]:
    messages = [{"role": m.role, "content": m.content} for m in request.messages]
    return {"model": "fake", "messages": messages, "temperature": 0.0, "max_tokens": 1024}


async def plain(base_url: str, requests: Sequence[Request], concurrency: int) -> float:
    """Completed requests per second of a minimal asyncio + httpx client."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60) as client:
        slots = asyncio.Semaphore(concurrency)

        async def one(request: Request) -> None:
            async with slots:
                response = await client.post("/chat/completions", json=_body(request))
                response.raise_for_status()
                response.json()["choices"][0]["message"]["content"]

        tic = time.perf_counter()
        await asyncio.gather(*(one(r) for r in requests))
        return len(requests) / (time.perf_counter() - tic)


async def benchreg_run(
    base_url: str,
    requests: Sequence[Request],
    concurrency: int,
    *,
    cache: str = "off",
    cache_dir: str | None = None,
) -> tuple[float, dict[str, Any]]:
    """(wall seconds, system stats) of the `openai` system answering ``requests``."""
    cfg = {"name": "openai", "base_url": base_url, "model": "fake", "concurrency": concurrency}
    options = {"cache": cache, "cache_dir": cache_dir}
    ctx = SystemContext(load_task("molp2s/gap"), None, Path("."), [], options=options)
    system = registry.systems.get("openai")(cfg, ctx)
    try:
        tic = time.perf_counter()
        check_answers(system, requests, await system.predict(list(requests)))
        seconds = time.perf_counter() - tic
        return seconds, system.report().stats
    finally:
        await system.aclose()


def start_server(latency_s: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchreg.systems.fake_server",
            "--latency-s",
            str(latency_s),
            "--lifetime-s",
            "900",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    port = int(proc.stdout.readline().split()[1])
    return proc, f"http://127.0.0.1:{port}/v1"


def server_requests(base_url: str) -> int:
    return int(httpx.get(f"{base_url}/stats").json().get("chat", 0))


async def main_async(args: argparse.Namespace, base_url: str) -> list[list[str]]:
    rows = []
    for concurrency, n in SIZES.items():
        best_plain = best_ours = 0.0
        for rep in range(args.repeats):
            requests = make_requests(n, f"c{concurrency}r{rep}-")
            best_plain = max(best_plain, await plain(base_url, requests, concurrency))
            seconds, _ = await benchreg_run(base_url, requests, concurrency)
            best_ours = max(best_ours, n / seconds)
        ideal = concurrency / args.latency_s
        rows.append(
            [
                f"concurrency {concurrency}",
                str(n),
                f"{best_plain:.0f}",
                f"{best_ours:.0f}",
                f"{best_ours / best_plain:.2f}",
                f"(ideal {ideal:.0f}/s)",
            ]
        )
    with tempfile.TemporaryDirectory() as cache_dir:
        requests = make_requests(SIZES[64], "warm-")
        before = server_requests(base_url)
        cold, _ = await benchreg_run(
            base_url, requests, 64, cache="read_write", cache_dir=cache_dir
        )
        middle = server_requests(base_url)
        warm, stats = await benchreg_run(
            base_url, requests, 64, cache="read_write", cache_dir=cache_dir
        )
        after = server_requests(base_url)
    rows.append(
        [
            "warm cache (c=64)",
            str(len(requests)),
            f"cold {cold:.2f} s",
            f"warm {warm:.3f} s",
            f"{cold / warm:.0f}x faster",
            f"requests: cold {middle - before}, warm {after - middle} "
            f"(client {stats['requests']}, hits {stats['cache_hits']})",
        ]
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-s", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    proc, base_url = start_server(args.latency_s)
    try:
        rows = asyncio.run(main_async(args, base_url))
    finally:
        proc.terminate()
        proc.wait(10)
    header = ["run", "requests", "plain req/s", "benchreg req/s", "ratio", "note"]
    print(f"fake server latency {args.latency_s * 1000:.0f} ms, best of {args.repeats}")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
