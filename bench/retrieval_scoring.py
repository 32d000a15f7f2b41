"""Benchmark: scoring 100,000 retrieval queries x 100 results (recall@10, MRR, nDCG@10 plus the
spec's other metrics), against ir-measures (pytrec_eval) on the same three standard measures.

Run by hand, from the project root:

    python -m bench.retrieval_scoring [--queries 100000] [--results 100] [--repeats 1]

Each side runs in its own subprocess (so its peak RSS is its own) on the same seeded data:
queries with 1-5 gold conversation turns, 100 ranked single-turn results each. The data are
generated before the clock starts and held as numpy arrays, the stand-in of a run file on disk
(as 10 million Python tuples they made every garbage collection of the timed code walk them).
Timed:
- benchreg: build each answer (Python dicts, as the predictions reader makes them, with the
  garbage collector paused as `benchreg.core.reader` does), check it (answer schema), resolve
  it against the gold regions (resolver), then every ranking metric of the retrieval task, in
  chunks of 2,000 queries (the answers of a chunk are dropped once resolved; the resolutions
  are kept);
- ir-measures: build the qrels and run dicts (collector paused the same way), then
  `calc_aggregate` of R@10, RR, nDCG@10.
With `--repeats N` the two sides alternate N times (a slow spell of a shared machine hits both)
and the medians are printed. Prints wall seconds and peak RSS of each, the ratio, and checks
that the three means agree.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

CHUNK = 2000
# one chunk: first query number, gold turns (flat) with per-query offsets, ranked turns and
# their scores (queries x results)
Chunk = tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def generate(n_queries: int, n_results: int, seed: int = 0) -> Iterator[Chunk]:
    rng = random.Random(seed)
    for first in range(0, n_queries, CHUNK):
        golds, turns, scores = [], [], []
        for _ in range(first, min(first + CHUNK, n_queries)):
            gold = rng.sample(range(1, 400), rng.randint(1, 5))
            pool = gold + rng.sample(range(400, 2000), n_results)
            turns.append(rng.sample(pool, n_results))
            scores.append(sorted((rng.random() for _ in range(n_results)), reverse=True))
            golds.append(gold)
        offsets = np.cumsum([0] + [len(g) for g in golds])
        yield (first, np.array([t for g in golds for t in g]), offsets,
               np.array(turns, dtype=np.int64), np.array(scores, dtype=np.float64))


def queries(chunk: Chunk) -> Iterator[tuple[str, list[int], list[int], list[float]]]:
    """qid, gold turns, ranked turns, scores of each query of a chunk, as Python objects."""
    first, gold, offsets, turns, scores = chunk
    gold_lists = gold.tolist()
    bounds = offsets.tolist()
    for i, (ranked, score) in enumerate(zip(turns.tolist(), scores.tolist(), strict=True)):
        yield f"q{first + i}", gold_lists[bounds[i] : bounds[i + 1]], ranked, score


@contextmanager
def gc_paused() -> Iterator[None]:
    # benchreg.core.reader.gc_paused for both sides' building step, written out: importing
    # benchreg here would add ~20 MB and its import time to the ir-measures side's figures
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def run_benchreg(n_queries: int, n_results: int) -> dict[str, float]:
    from benchreg.core.registry import load_components
    from benchreg.core.scoring import parse_and_check, resolve, score
    from benchreg.core.task import load_task
    from benchreg.core.types import Dataset, Prediction, Sample

    load_components()
    spec = load_task("retrieval/conversation")
    chunks = list(generate(n_queries, n_results))
    tic = time.perf_counter()
    samples, predictions = [], []
    dataset = Dataset(samples=[], files=[], info={"manifest": {}})
    for chunk in chunks:
        batch_s, batch_p = [], []
        with gc_paused():
            for qid, gold, ranked, scores in queries(chunk):
                batch_s.append(Sample(
                    qid, {}, [{"source_id": "s", "region": {"turn": g}} for g in gold],
                    {"modality": "conversation", "as_of": None, "holder": None}))
                batch_p.append(Prediction(qid, answer={"results": [
                    {"source_id": "s", "region": {"turn": t}, "score": sc}
                    for t, sc in zip(ranked, scores, strict=True)]}, latency_s=0.01))
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
        with gc_paused():
            for qid, gold, ranked, scores in queries(chunk):
                qrels[qid] = {f"t{g}": 1 for g in gold}
                run[qid] = {f"t{t}": sc for t, sc in zip(ranked, scores, strict=True)}
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
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--side", choices=["benchreg", "ir_measures"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        child(args.side, args.queries, args.results)
        return 0
    runs: dict[str, list[dict[str, float]]] = {"benchreg": [], "ir_measures": []}
    for _ in range(args.repeats):
        for side in runs:
            proc = subprocess.run(
                [sys.executable, "-m", "bench.retrieval_scoring", "--side", side,
                 "--queries", str(args.queries), "--results", str(args.results)],
                check=True, capture_output=True, text=True)
            runs[side].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    out = {side: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
           for side, rs in runs.items()}
    ours, theirs = out["benchreg"], out["ir_measures"]
    ratios = [a["wall"] / b["wall"] for a, b in zip(runs["benchreg"], runs["ir_measures"],
                                                     strict=True)]
    print(f"{args.queries} queries x {args.results} results, median of {args.repeats}")
    for side in runs:
        walls = " ".join(f"{r['wall']:.1f}" for r in runs[side])
        print(f"  {side:12s} wall {out[side]['wall']:7.2f} s   peak RSS "
              f"{out[side]['peak_rss_mb']:7.0f} MB (process, incl. the generated data)"
              f"   runs: {walls}")
    print(f"  ratio benchreg / ir-measures wall (median of pairs): "
          f"{statistics.median(ratios):.2f}")
    for name in ("recall@10", "mrr", "ndcg@10"):
        diff = abs(ours[name] - theirs[name])
        print(f"  {name:10s} benchreg {ours[name]:.12f}  ir-measures {theirs[name]:.12f}  "
              f"|diff| {diff:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
