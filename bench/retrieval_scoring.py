"""Benchmark: the documented retrieval scoring command on 100,000 queries x 100 results, beside
ir-measures (pytrec_eval) and ranx on the same run.

Run by hand, from the project root:

    python -m bench.retrieval_scoring [--queries 100000] [--results 100] [--repeats 5]
    BENCH_BENCHREG_ROOT=/tmp/before python -m bench.retrieval_scoring --queries 20000  # old code

Data (generated in a temp folder, seeded): a retrieval data root for the `pdf` modality as the
loader reads it (docs/retrieval.md "Data root"): `corpus/manifest.jsonl` with 2,000 documents
(no corpus files), `sets/bench.jsonl` with N dev entries, each about one document
(`scope.session`, as MMLongBench-Doc) with 1-3 gold pages; the run, 100 results per query
(pages of its own document, the gold among them for most queries, and a few of other
documents, which the resolver flags out of scope), distinct scores, written twice:

- `run.trec` (`qid Q0 docno rank score tag`, ordered by score) with `run.trec.atoms.jsonl`
  beside it (docno -> source_id, region {page}), and
- `run.jsonl` (one line per query, `{"query_id", "results": [{source_id, region, score}]}`);
- `qrels.txt` (TREC qrels of the gold pages, docnos as in the atoms) for the references.

Sides, each a whole process reading the run from disk (bench/_harness.py: fresh output folder
per run, wall from start to exit, peak RSS of the process tree), paired, medians:

- benchreg, TREC + atoms: `python -m benchreg task=retrieval/pdf model=predictions
  model.path=run.trec roots.retrieval=ROOT hydra.run.dir={out}/run` (the documented command),
  as a first run (an empty cache folder, `BENCHREG_CACHE_DIR`, before each run: the entries
  are read and checked) and with the data set seen before (a cache filled by one discarded
  run: the checked entries are reused, bench/_harness.py `cold_and_warm`; the run file itself
  is always read in full);
- benchreg, JSONL: the same with `model.path=run.jsonl`, data set seen before;
- ir-measures (pytrec_eval): read qrels and run (`ir_measures.read_trec_*`), `calc_aggregate` of
  R@10, RR, nDCG@10;
- ranx: `Qrels.from_file`, `Run.from_file` (kind trec), `evaluate` of recall@10, mrr, ndcg@10.

Checked after every run: benchreg's metrics.json scored every query (`n` of recall@10 equals N,
statuses all ok); the three means of every side agree to 1e-9.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

from bench._harness import Side, benchreg_cli, cold_and_warm, measure, report

N_DOCS = 2000
PAGES = 200  # pages per document
DATASET, REVISION = "benchreg-sample-retrieval", "2024.1"
# the embedded sample's (synthetic) annotation: generated gold is demonstration data, honestly
ANNOTATION = "hand-written for the benchreg embedded sample (demonstration, not a benchmark)"
MEASURES = ("recall@10", "mrr", "ndcg@10")
TOLERANCE = 1e-9
COLD = "benchreg, TREC+atoms, first run"


def build(folder: Path, n_queries: int, n_results: int, seed: int = 0) -> dict[str, Path]:
    """Write the data root, both runs and the qrels into ``folder``."""
    rng = random.Random(seed)
    root = folder / "root"
    (root / "sets").mkdir(parents=True)
    (root / "corpus").mkdir()
    with (root / "corpus" / "manifest.jsonl").open("w") as out:
        for d in range(N_DOCS):
            row = {
                "source_id": f"doc{d}",
                "modality": "pdf",
                "dataset": DATASET,
                "revision": REVISION,
                "license": "CC0-1.0",
                "annotation_source": ANNOTATION,
            }
            out.write(json.dumps(row) + "\n")
    with (folder / "run.trec.atoms.jsonl").open("w") as out:
        for d in range(N_DOCS):
            for p in range(1, PAGES + 1):
                atom = {"atom_id": f"doc{d}-p{p}", "source_id": f"doc{d}", "region": {"page": p}}
                out.write(json.dumps(atom) + "\n")
    paths = {
        "root": root,
        "trec": folder / "run.trec",
        "jsonl": folder / "run.jsonl",
        "qrels": folder / "qrels.txt",
    }
    own = min(n_results - 5, PAGES)
    with (
        (root / "sets" / "bench.jsonl").open("w") as sets,
        paths["trec"].open("w") as trec,
        paths["jsonl"].open("w") as jsonl,
        paths["qrels"].open("w") as qrels,
    ):
        for q in range(n_queries):
            qid, doc = f"q{q:06d}", rng.randrange(N_DOCS)
            gold = rng.sample(range(1, PAGES + 1), rng.randint(1, 3))
            entry = {
                "query_id": qid,
                "modality": "pdf",
                "question": f"question {q}",
                "answer": None,
                "answer_format": "none",
                "gold": [{"source_id": f"doc{doc}", "region": {"page": p}} for p in gold],
                "scope": {"holder": None, "session": f"doc{doc}", "scenario": "bench"},
                "as_of": None,
                "unanswerable": False,
                "origin": {
                    "dataset": DATASET,
                    "revision": REVISION,
                    "item": qid,
                    "license": "CC0-1.0",
                },
                "split": "dev",
            }
            sets.write(json.dumps(entry) + "\n")
            for p in gold:
                qrels.write(f"{qid} 0 doc{doc}-p{p} 1\n")
            pages = rng.sample(range(1, PAGES + 1), own)
            hits = [p for p in gold if p in pages]
            if not hits and rng.random() < 0.8:  # most queries find some gold
                pages[rng.randrange(own)] = gold[0]
            if rng.random() < 0.5:  # gold near the top for half of the queries
                for p in gold[:2]:
                    if p in pages:
                        pages.remove(p)
                    pages.insert(rng.randrange(10), p)
                pages = pages[:own]
            ranked = [(doc, p) for p in pages]
            seen = set(ranked)  # no result twice (ir-measures and ranx keep one of each docno)
            while len(ranked) < n_results:
                other = (rng.randrange(N_DOCS), rng.randint(1, PAGES))
                if other[0] != doc and other not in seen:
                    seen.add(other)
                    ranked.insert(rng.randrange(len(ranked) + 1), other)
            scores = sorted(rng.sample(range(1, 10**9), n_results), reverse=True)
            results = []
            for rank, ((d, p), s) in enumerate(zip(ranked, scores, strict=True), start=1):
                score = s / 1e6
                trec.write(f"{qid} Q0 doc{d}-p{p} {rank} {score!r} bench\n")
                results.append({"source_id": f"doc{d}", "region": {"page": p}, "score": score})
            jsonl.write(json.dumps({"query_id": qid, "results": results}) + "\n")
    return paths


def prepare(folder: Path, n_queries: int, n_results: int) -> dict[str, Path]:
    """Build the data in ``folder``, or reuse it when a previous ``--keep`` built the same size."""
    stamp = folder / "bench.json"
    size = {"queries": n_queries, "results": n_results}
    names = {"root": "root", "trec": "run.trec", "jsonl": "run.jsonl", "qrels": "qrels.txt"}
    if stamp.is_file() and json.loads(stamp.read_text()) == size:
        return {k: folder / v for k, v in names.items()}
    if folder.exists() and any(folder.iterdir()):
        raise SystemExit(f"--keep {folder}: not empty and not data of this size; use a new folder")
    folder.mkdir(parents=True, exist_ok=True)
    paths = build(folder, n_queries, n_results)
    stamp.write_text(json.dumps(size))
    return paths


def run_ir_measures(qrels: Path, run: Path) -> dict[str, float]:
    import ir_measures

    names = {"R@10": "recall@10", "RR": "mrr", "nDCG@10": "ndcg@10"}
    measures = [ir_measures.parse_measure(m) for m in names]
    agg = ir_measures.calc_aggregate(
        measures, ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(run))
    )
    return {names[str(k)]: float(v) for k, v in agg.items()}


def run_ranx(qrels: Path, run: Path) -> dict[str, float]:
    from ranx import Qrels, Run, evaluate

    values = evaluate(
        Qrels.from_file(str(qrels), kind="trec"),
        Run.from_file(str(run), kind="trec"),
        list(MEASURES),
    )
    return {k: float(v) for k, v in values.items()}


def benchreg_check(n_queries: int, found: dict[str, dict[str, float]], label: str):
    def check(out_dir: Path, stdout: str) -> None:
        record = json.loads((out_dir / "run" / "metrics.json").read_text())
        recall = record["metrics"]["recall@10"]
        statuses = record.get("statuses") or {}
        if recall["n"] != n_queries or recall["denominator"] != n_queries:
            raise SystemExit(
                f"{label}: scored {recall['n']}/{recall['denominator']} of {n_queries} queries"
            )
        if statuses and statuses.get("ok") != n_queries:
            raise SystemExit(f"{label}: statuses {statuses}")
        found[label] = {m: float(record["metrics"][m]["value"]) for m in MEASURES}

    return check


def reference_check(found: dict[str, dict[str, float]], label: str):
    def check(out_dir: Path, stdout: str) -> None:
        found[label] = json.loads(stdout.strip().splitlines()[-1])

    return check


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--results", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--keep",  # a folder outside the temp folder: reused by later runs of the script
        type=Path,
        help="build the data in DIR (kept), or reuse it when DIR already holds it",
    )
    parser.add_argument("--side", choices=["ir_measures", "ranx"], help=argparse.SUPPRESS)
    parser.add_argument("--qrels", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--run", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        fn = run_ir_measures if args.side == "ir_measures" else run_ranx
        print(json.dumps(fn(args.qrels, args.run)))
        return 0
    if args.results < 10:
        parser.error("--results must be >= 10")
    found: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = prepare(args.keep or Path(tmp), args.queries, args.results)
        me = [
            sys.executable,
            "-m",
            "bench.retrieval_scoring",
            "--qrels",
            str(paths["qrels"]),
            "--run",
            str(paths["trec"]),
            "--side",
        ]
        sides = []
        for label, ref in (
            ("ir-measures (pytrec_eval), TREC run", "ir_measures"),
            ("ranx, TREC run", "ranx"),
        ):
            sides.append(Side(label, [*me, ref], check=reference_check(found, label)))

        def command(run: Path) -> tuple[list[str], dict[str, str], str | None]:
            return benchreg_cli(
                "task=retrieval/pdf",
                "model=predictions",
                f"model.path={run}",
                f"roots.retrieval={paths['root']}",
                "hydra.run.dir={out}/run",
            )

        # first run: an empty cache (the entries read and checked); then the same data set seen
        # before (its checked entries reused from the cache, the run itself read in full)
        argv, env, cwd = command(paths["trec"])
        cold_label, warm_label = COLD, "benchreg, TREC+atoms, data cached"
        first, repeated = cold_and_warm(
            argv,
            Path(tmp),
            cold_label,
            warm_label,
            env=env,
            cwd=cwd,
            check=benchreg_check(args.queries, {}, "warm-up"),
        )
        first.check = benchreg_check(args.queries, found, cold_label)
        repeated.check = benchreg_check(args.queries, found, warm_label)
        sides += [first, repeated]
        label = "benchreg, JSONL, data cached"
        argv, env, cwd = command(paths["jsonl"])
        env = {**env, "BENCHREG_CACHE_DIR": repeated.env["BENCHREG_CACHE_DIR"]}
        check = benchreg_check(args.queries, found, label)
        sides.append(Side(label, argv, env=env, cwd=cwd, check=check))
        measure(sides, args.repeats)
    reference = found[sides[0].label]
    worst = max(abs(values[m] - reference[m]) for values in found.values() for m in MEASURES)
    print(
        f"retrieval/pdf, {args.queries:,} queries x {args.results} results, "
        f"{args.repeats} paired runs; code: {benchreg_cli()[2]}"
    )
    for label, values in found.items():
        print(f"  {label:<38} " + "  ".join(f"{m} {values[m]:.12f}" for m in MEASURES))
    print(f"  largest |difference| between sides: {worst:.1e}")
    print(report(sides, sides[0]))
    print(report(sides, sides[1]))
    if worst > TOLERANCE:
        print(f"PARITY FAILED: the sides differ by {worst:.1e} > {TOLERANCE:g}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
