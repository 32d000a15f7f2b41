"""Benchmark against the REAL local llama.cpp server (llama-cpp-python + the packaged
SmolLM2-135M-Instruct): benchreg's throughput against a plain asyncio+httpx generator, and what
structured output and option (logprob) scoring add per request.

Run by hand, on a quiet machine (needs the `llama` extra; about 10 minutes on 2 cores):

    python bench/model_local.py [--samples 8] [--max-tokens 16] [--repeats 3]

One server is started for the whole benchmark (the GGUF's own chat template, as model=llama_cpp
starts it) and both sides talk to it over HTTP with the same request bodies: the rendered
MolP2S prompts of the embedded sample (gap, view correct), temperature 0, a fixed max_tokens.

1. Throughput at concurrency 1, 2 and 4: completed requests per second of benchreg's chat
   system (model=openai pointed at the server, cache off, every request in one call, as the core
   hands them to a model system)
   divided by those of a plain client (one httpx.AsyncClient, a semaphore, the same bodies).
   Paired runs (each repeat runs both sides, alternating which goes first); the median ratio.
   Goal >= 0.95. llama-cpp-python answers one request at a time, so concurrency raises
   latency, not throughput; benchreg's `latency_p50_s` stays the request time and the wait for
   a slot shows as `queue_p50_s`.
2. Per request, the same prompts: free text vs structured output (the answer schema as a
   grammar), both cut at the same max_tokens, so the difference is the constraint's cost; and
   option scoring (`model.scoring=logprobs`: 1-2 completions with max_tokens 1 and logprobs)
   vs a 1-token text completion of the same prompt (the prompt's own cost), and vs a default
   free-text answer (what scoring replaces).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from benchreg import RunOptions, load_task
from benchreg.core import registry
from benchreg.core.pipeline import prepare
from benchreg.core.system import SystemContext, check_answers
from benchreg.core.types import Request
from benchreg.systems.chat_template import choose_format
from benchreg.systems.llama_cpp import packaged_gguf
from benchreg.systems.llama_server import LlamaServer, free_port, server_command

BATCH_SIZE = 64


def requests_of(samples: int) -> tuple[Any, list[Request]]:
    task = load_task("molp2s/gap")
    prepared = prepare(
        task, view="correct", roots={}, options=RunOptions(progress=False), announce=False
    )
    chosen = prepared.samples[:samples]
    prompts = prepared.render_prompts(chosen)
    return task, [Request(s, m) for s, m in zip(chosen, prompts, strict=True)]


def body(request: Request, max_tokens: int) -> dict[str, Any]:
    messages = [{"role": m.role, "content": m.content} for m in request.messages]
    return {"model": "local", "messages": messages, "temperature": 0.0, "max_tokens": max_tokens}


async def plain(base_url: str, requests: Sequence[Request], concurrency: int, mt: int) -> float:
    """Completed requests per second of a minimal asyncio + httpx client."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=600) as client:
        slots = asyncio.Semaphore(concurrency)

        async def one(request: Request) -> None:
            async with slots:
                response = await client.post("/chat/completions", json=body(request, mt))
                response.raise_for_status()
                response.json()["choices"][0]["message"]["content"]

        tic = time.perf_counter()
        await asyncio.gather(*(one(r) for r in requests))
        return len(requests) / (time.perf_counter() - tic)


async def benchreg_side(
    task: Any, base_url: str, requests: Sequence[Request], cfg: dict[str, Any], local: bool = False
) -> tuple[float, dict[str, Any], list[Any]]:
    """(requests per second, system stats, predictions) of benchreg's chat system talking to
    the server: `openai` (throughput), or with ``local`` the `llama_cpp` system attached to the
    running server (what `model=llama_cpp` sends: structured output in llama-cpp-python's form,
    option scoring through the GGUF's own template)."""
    options = {"cache": "off", "batch_size": BATCH_SIZE}
    ctx = SystemContext(task, None, Path("."), [], options=options)
    if local:
        full = {"name": "llama_cpp", "preflight": False, **cfg}
        system = registry.systems.get("llama_cpp")(full, ctx)

        async def attached() -> None:  # the server is already running: no start
            system.config = system.config.model_copy(update={"base_url": base_url})

        system.start = attached
    else:
        full = {"name": "openai", "base_url": base_url, "model": "local", "preflight": False}
        system = registry.systems.get("openai")({**full, **cfg}, ctx)
    out: list[Any] = []
    try:
        tic = time.perf_counter()
        out = check_answers(system, requests, await system.predict(requests))  # as the core does
        seconds = time.perf_counter() - tic
        assert all(p.status.value == "ok" for p in out), [p.detail for p in out]
        return len(requests) / seconds, system.report().stats, out
    finally:
        await system.aclose()


async def throughput(task: Any, base_url: str, requests: list[Request], args: Any) -> None:
    print("\n## Throughput (requests/s, median of paired runs)\n")
    print("| concurrency | plain httpx | benchreg | ratio | benchreg latency p50 | queue p50 |")
    print("|---|---|---|---|---|---|")
    for concurrency in (1, 2, 4):
        cfg = {"concurrency": concurrency, "max_tokens": args.max_tokens, "temperature": 0.0}
        ratios, plains, mine, stats = [], [], [], {}
        for repeat in range(args.repeats):
            if repeat % 2 == 0:
                p = await plain(base_url, requests, concurrency, args.max_tokens)
                b, stats, _ = await benchreg_side(task, base_url, requests, cfg)
            else:
                b, stats, _ = await benchreg_side(task, base_url, requests, cfg)
                p = await plain(base_url, requests, concurrency, args.max_tokens)
            plains.append(p)
            mine.append(b)
            ratios.append(b / p)
        print(
            f"| {concurrency} | {statistics.median(plains):.3f} | {statistics.median(mine):.3f} "
            f"| {statistics.median(ratios):.3f} | {stats['latency_p50_s']} s "
            f"| {stats['queue_p50_s']} s |",
            flush=True,
        )


async def per_request(task: Any, base_url: str, requests: list[Request], args: Any) -> None:
    n = len(requests)
    cut = {"max_tokens": args.max_tokens, "temperature": 0.0}
    modes = [
        (
            "1-token text completion (the prompt's cost)",
            {"endpoint": "completions", "max_tokens": 1},
        ),
        ("free text, max_tokens cut", {**cut}),
        ("structured (answer schema as a grammar), same cut", {**cut, "structured": "json_schema"}),
        ("option scoring (scoring=logprobs)", {"scoring": "logprobs"}),
        ("free text, default max_tokens (512)", {"max_tokens": 512, "temperature": 0.0}),
    ]
    print(f"\n## Per request ({n} MolP2S prompts, model=llama_cpp's requests, median of repeats)\n")
    print(
        "| request | s / sample | completion tokens / sample | requests / sample "
        "| s per generated token after the first |"
    )
    print("|---|---|---|---|---|")
    prompt_cost = None
    for label, cfg in modes:
        times, tokens, asked = [], 0, 0
        for _ in range(args.repeats):
            rate, stats, _ = await benchreg_side(task, base_url, requests, {**cfg}, local=True)
            times.append(1 / rate)
            tokens, asked = stats["completion_tokens"], stats["requests"]
        per_sample = statistics.median(times)
        prompt_cost = per_sample if prompt_cost is None else prompt_cost
        per_token = "-"
        if tokens / n > 1.5 and asked == n:
            per_token = f"{(per_sample - prompt_cost) / (tokens / n - 1) * 1000:.1f} ms"
        print(
            f"| {label} | {per_sample:.3f} | {tokens / n:.1f} | {asked / n:.2f} | {per_token} |",
            flush=True,
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip", default="", help="throughput,per_request: parts to skip")
    args = parser.parse_args()
    task, requests = requests_of(args.samples)
    gguf = packaged_gguf()
    port = free_port()
    fmt = choose_format(gguf, [])
    server = LlamaServer(server_command(gguf, port, 4096, None, fmt.server_args), port, 180)
    await server.start()
    try:
        print(f"server: {gguf.name} on {server.base_url}, format {fmt.name}")
        # warm-up: the model's first request pays one-time costs
        await plain(server.base_url, requests[:1], 1, args.max_tokens)
        if "throughput" not in args.skip:
            await throughput(task, server.base_url, requests, args)
        if "per_request" not in args.skip:
            await per_request(task, server.base_url, requests, args)
    finally:
        await server.stop()


if __name__ == "__main__":
    asyncio.run(main())
