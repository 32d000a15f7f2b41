"""Benchmark: scoring 100,000 retrieval queries x 100 results (recall@10, MRR, nDCG@10 plus the
spec's other metrics), against ir-measures (pytrec_eval) on the same three standard measures.

Run by hand, from the project root:

    python -m bench.retrieval_scoring [--queries 100000] [--results 100]

Each side runs in its own subprocess (so its peak RSS is its own) on the same seeded data:
queries with 1-5 gold conversation turns, 100 ranked single-turn results each. Timed:
- benchreg: build each answer, check it (answer schema), resolve it against the gold regions
  (resolver), then every ranking metric of the retrieval task, in chunks of 2,000 queries (the
  answers of a chunk are dropped once resolved; the resolutions are kept);
- ir-measures: build the qrels and run dicts, then `calc_aggregate` of R@10, RR, nDCG@10.
Prints wall seconds and peak RSS of each, the ratio, and checks that the three means agree.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Iterator

CHUNK = 2000
Raw = tuple[str, list[int], list[tuple[int, float]]]  # qid, gold turns, (turn, score) ranked


def generate(n_queries: int, n_results: int, seed: int = 0) -> Iterator[list[Raw]]:
    rng = random.Random(seed)
    chunk: list[Raw] = []
    for q in range(n_queries):
        gold = rng.sample(range(1, 400), rng.randint(1, 5))
        pool = gold + rng.sample(range(400, 2000), n_results)
        ranked = rng.sample(pool, n_results)
        scores = sorted((rng.random() for _ in ranked), reverse=True)
        chunk.append((f"q{q}", gold, list(zip(ranked, scores, strict=True))))
        if len(chunk) == CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def run_benchreg(n_queries: int, n_results: int) -> dict[str, float]:
    from benchreg.core.registry import load_families
    from benchreg.core.scoring import parse_and_check, resolve, score
    from benchreg.core.tasks import load_task
    from benchreg.core.types import Dataset, Prediction, Sample

    load_families()
    spec = load_task("retrieval/conversation")
    chunks = list(generate(n_queries, n_results))
    tic = time.perf_counter()
    samples, predictions = [], []
    dataset = Dataset(samples=[], files=[], info={"manifest": {}})
    for chunk in chunks:
        batch_s = [Sample(qid, {}, [{"source_id": "s", "region": {"turn": g}} for g in gold],
                          {"modality": "conversation", "as_of": None, "holder": None})
                   for qid, gold, _ in chunk]
        batch_p = [Prediction(qid, answer={"results": [
            {"source_id": "s", "region": {"turn": t}, "score": sc} for t, sc in ranked]},
            latency_s=0.01) for qid, _, ranked in chunk]
        parse_and_check(spec, batch_s, batch_p)
        resolve(spec.model_copy(update={"resolver": spec.resolver.model_copy(
            update={"params": {"record": False}})}), dataset, batch_s, batch_p)
        for p in batch_p:
            p.answer = None
        samples += batch_s
        predictions += batch_p
    scores = score(spec, samples, predictions, n_boot=0, progress=False)
    wall = time.perf_counter() - tic
    return {"wall": wall, **{k: scores.values[k].value for k in ("recall@10", "mrr", "ndcg@10")}}


def run_ir_measures(n_queries: int, n_results: int) -> dict[str, float]:
    import ir_measures

    chunks = list(generate(n_queries, n_results))
    tic = time.perf_counter()
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for chunk in chunks:
        for qid, gold, ranked in chunk:
            qrels[qid] = {f"t{g}": 1 for g in gold}
            run[qid] = {f"t{t}": sc for t, sc in ranked}
    measures = [ir_measures.parse_measure(m) for m in ("R@10", "RR", "nDCG@10")]
    agg = ir_measures.calc_aggregate(measures, qrels, run)
    wall = time.perf_counter() - tic
    values = {str(k): v for k, v in agg.items()}
    return {"wall": wall, "recall@10": values["R@10"], "mrr": values["RR"],
            "ndcg@10": values["nDCG@10"]}


def child(side: str, n_queries: int, n_results: int) -> None:
    out = (run_benchreg if side == "benchreg" else run_ir_measures)(n_queries, n_results)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--results", type=int, default=100)
    parser.add_argument("--side", choices=["benchreg", "ir_measures"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        child(args.side, args.queries, args.results)
        return 0
    out = {}
    for side in ("benchreg", "ir_measures"):
        proc = subprocess.run(
            [sys.executable, "-m", "bench.retrieval_scoring", "--side", side,
             "--queries", str(args.queries), "--results", str(args.results)],
            check=True, capture_output=True, text=True)
        out[side] = json.loads(proc.stdout.strip().splitlines()[-1])
    ours, theirs = out["benchreg"], out["ir_measures"]
    print(f"{args.queries} queries x {args.results} results")
    for side in ("benchreg", "ir_measures"):
        print(f"  {side:12s} wall {out[side]['wall']:7.2f} s   peak RSS "
              f"{out[side]['peak_rss_mb']:7.0f} MB (process, incl. the generated data)")
    print(f"  ratio benchreg / ir-measures wall: {ours['wall'] / theirs['wall']:.2f}")
    for name in ("recall@10", "mrr", "ndcg@10"):
        diff = abs(ours[name] - theirs[name])
        print(f"  {name:10s} benchreg {ours[name]:.12f}  ir-measures {theirs[name]:.12f}  "
              f"|diff| {diff:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
