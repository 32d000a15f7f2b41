"""Benchmark: reaction-condition MC scoring at 100,000 questions vs a minimal stdlib scorer.

Run by hand, from the project root:

    python -m bench.reaction_mc_100k [--questions 100000] [--repeats 3]

Data (temp folder): the embedded sample's `single_varying` questions, cycled with new ids
(`bench<k>_table_0_q1`) into one `multiple_choice_single_varying.json` of N questions (~1.9 kB
each), and a predictions file `{id: index}` with a seeded random option per question.

Sides, each in its own process (whole-process wall and peak RSS, see bench/_harness.py):
- `minimal scorer`: stdlib only, the structural rules of `records.py` (options non-empty, the
  five aligned meta lists as long as the options, answer a non-empty list of in-range ints, id
  pattern and suffix, question_type, target_key), ids unique, then hits = predicted index among
  the options of the best `meta.effective_scores` (benchreg's `exact_match_accuracy`);
- `benchreg, first run`: `run_task(reaction_mc/single_varying, model=predictions)`, default
  CIs, with an empty check cache;
- `benchreg, repeated run`: the same with the check cache of an earlier run (unchanged file: the
  consistency validator's findings are reused, see docs/scale.md).
Hits are checked equal on both sides.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench._harness import Side, cold_and_warm, measure, report

FILE = "multiple_choice_single_varying.json"
ALIGNED = (
    "yields", "effective_scores", "scores", "option_relative_scores", "option_source_entries"
)


def build(folder: Path, n: int) -> None:
    sample = Path(__file__).resolve().parents[1] / "benchreg/families/reaction_mc/sample" / FILE
    pool = json.loads(sample.read_text("utf-8"))
    rng = random.Random(0)
    questions, preds = [], {}
    for k in range(n):
        question = {**pool[k % len(pool)], "id": f"bench{k}_table_0_q1"}
        questions.append(question)
        preds[question["id"]] = rng.randrange(len(question["options"]))
    (folder / "data").mkdir()
    (folder / "data" / FILE).write_text(json.dumps(questions, ensure_ascii=False, indent=2))
    (folder / "predictions.json").write_text(json.dumps(preds))


ID_RE = re.compile(r"^(?P<table>.+)_q(?P<n>\d+)(?P<suffix>_ref_control|_ref)?$")


def minimal_scorer(folder: Path) -> dict[str, int]:
    questions = json.loads((folder / "data" / FILE).read_text("utf-8"))
    gold: dict[str, list[int]] = {}
    for q in questions:
        qid, n = q["id"], len(q["options"])
        match = ID_RE.match(qid)
        if qid in gold or not match or match.group("suffix") or n == 0:
            raise ValueError(f"bad question {qid}")
        if q["question_type"] != "single_varying" or not q.get("target_key"):
            raise ValueError(f"bad question {qid}")
        if any(len(q["meta"][name]) != n for name in ALIGNED):
            raise ValueError(f"bad meta in {qid}")
        answer = q["answer"]
        if not answer or any(type(i) is not int or not 0 <= i < n for i in answer):
            raise ValueError(f"bad answer in {qid}")
        effective = q["meta"]["effective_scores"]  # exact match: an option of the best score
        top = max(effective)
        gold[qid] = [i for i, value in enumerate(effective) if value == top]
    preds = json.loads((folder / "predictions.json").read_text("utf-8"))
    return {"hits": sum(1 for qid, index in preds.items() if index in gold.get(qid, ()))}


def benchreg_scorer(folder: Path) -> dict[str, Any]:
    from benchreg import RunOptions, load_task, run_task

    result = run_task(
        load_task("reaction_mc/single_varying"),
        view=None,
        roots={"reaction_mc": str(folder / "data")},
        options=RunOptions(progress=False),
        system_cfg={"name": "predictions", "path": str(folder / "predictions.json")},
    )
    workers = result.dataset.info.get("read_by", {}).get("worker_peak_rss_mib", [])
    hits = round(result.metrics["exact_match_accuracy"].value * len(result.samples))
    return {"hits": hits, "worker_peak_rss_mib": workers}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--side", choices=["minimal", "benchreg"], help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        fn = minimal_scorer if args.side == "minimal" else benchreg_scorer
        print(json.dumps(fn(args.data)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build(folder, args.questions)
        size = (folder / "data" / FILE).stat().st_size
        me = [sys.executable, "-m", "bench.reaction_mc_100k", "--data", str(folder), "--side"]
        sides = [
            Side("minimal stdlib scorer (reference)", [*me, "minimal"]),
            *cold_and_warm(
                [*me, "benchreg"],
                folder,
                "benchreg, first run (empty check cache)",
                "benchreg, repeated run (unchanged data)",
            ),
        ]
        measure(sides, args.repeats)
        results = [[json.loads(o.strip().splitlines()[-1]) for o in s.outputs] for s in sides]
        hits = {r["hits"] for side in results for r in side}
        assert len(hits) == 1, hits
        workers = [w for r in results[1] for w in r["worker_peak_rss_mib"]]
    print(f"reaction-MC single_varying, {args.questions:,} questions ({size / 2**20:.0f} MiB "
          f"JSON), same hits on both sides: {hits.pop():,}")
    print(report(sides, sides[0], per=args.questions, unit="questions"))
    if workers:
        print(f"first run: read by {len(results[1][0]['worker_peak_rss_mib']) + 1} processes; "
              f"the load worker's own peak RSS {statistics.median(workers):.0f} MiB (not in the "
              "column above); all processes together at most "
              f"{statistics.median(sides[1].tree_rss_mib):.0f} MiB (sampled every 20 ms; medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
