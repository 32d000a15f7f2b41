"""Benchmark: MolP2S predictions scoring at 100,000 records vs a minimal stdlib scorer.

Run by hand, from the project root:

    python -m bench.molp2s_100k [--records 100000] [--repeats 3]

Data (written to a temp folder): a reference-size release is generated (`builders/molp2s`,
136 source records, 15 directories x 3 views, 5,742 task lines); its task lines are pooled and
cycled, with new record ids, into one `data/big/correct.jsonl` of N records (+ labels) and a
predictions file with a seeded random candidate index per record. Like the release itself
(the same molecules in every property directory), candidate SMILES repeat across records; the
number of distinct SMILES is printed.

Sides, each in its own process, whole-process wall and peak RSS (see bench/_harness.py):
- `minimal scorer`: stdlib only, the same rules without RDKit: JSON per line, record ids unique,
  every task has one label and vice versa, label within the candidates, predictions joined by
  record id (duplicate ids rejected, missing = wrong), hits counted;
- `benchreg, first run`: `run_task(molp2s task, model=predictions)` with an empty validation cache
  (every distinct SMILES parsed by RDKit once);
- `benchreg, repeated run`: the same, with the cache folder of a previous run (unchanged files:
  RDKit checks skipped and the samples read back from the loaded-data cache, see docs/scale.md).
Default CIs (Wilson for accuracy). Hits are checked equal on all sides.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

from bench._harness import Side, cold_and_warm, measure, report


def build(folder: Path, n_records: int) -> tuple[Path, Path, int]:
    from builders.molp2s import generate

    ref = folder / "ref"
    generate.generate_release(
        ref,
        n_records=generate.REFERENCE_RECORDS,
        counterfactual_sizes=generate.REFERENCE_COUNTERFACTUAL,
        seed=0,
    )
    pool = []
    for path in sorted((ref / "data").glob("*/*.jsonl")):
        if path.name.endswith(".labels.jsonl"):
            continue
        labels = [
            json.loads(x)["label"]
            for x in path.with_suffix(".labels.jsonl").read_text().splitlines()
        ]
        for line, label in zip(path.read_text().splitlines(), labels, strict=True):
            pool.append((json.loads(line), label))
    root = folder / "release"
    (root / "data" / "big").mkdir(parents=True)
    rng = random.Random(0)
    smiles: set[str] = set()
    with (
        (root / "data" / "big" / "correct.jsonl").open("w") as tasks,
        (root / "data" / "big" / "correct.labels.jsonl").open("w") as labels_out,
        (folder / "predictions.jsonl").open("w") as preds,
    ):
        for i in range(n_records):
            record, label = pool[i % len(pool)]
            record = {**record, "record_id": f"big-{i:06d}"}
            smiles.update(record["candidate_completed_smiles"])
            smiles.add(record["masked_smiles"])
            tasks.write(json.dumps(record, ensure_ascii=False) + "\n")
            labels_out.write(json.dumps({"record_id": record["record_id"], "label": label}) + "\n")
            index = rng.randrange(len(record["candidate_completed_smiles"]))
            preds.write(
                json.dumps({"record_id": record["record_id"], "selected_candidate_index": index})
                + "\n"
            )
    return root, folder / "predictions.jsonl", len(smiles)


def minimal_scorer(root: Path, preds: Path) -> int:
    folder = root / "data" / "big"
    tasks: dict[str, int] = {}
    for line in (folder / "correct.jsonl").read_text("utf-8").splitlines():
        obj = json.loads(line)
        rid = obj["record_id"]
        if rid in tasks:
            raise ValueError(f"duplicate record_id {rid}")
        tasks[rid] = len(obj["candidate_completed_smiles"])
    labels: dict[str, int] = {}
    for line in (folder / "correct.labels.jsonl").read_text("utf-8").splitlines():
        obj = json.loads(line)
        rid, label = obj["record_id"], obj["label"]
        if rid in labels or rid not in tasks or not 0 <= label < tasks[rid]:
            raise ValueError(f"bad label line for {rid}")
        labels[rid] = label
    if len(labels) != len(tasks):
        raise ValueError("records without a label")
    seen: set[str] = set()
    hits = 0
    for line in preds.read_text("utf-8").splitlines():
        obj = json.loads(line)
        rid = obj["record_id"]
        if rid in seen:
            raise ValueError(f"duplicate prediction {rid}")
        seen.add(rid)
        hits += rid in labels and obj.get("selected_candidate_index") == labels[rid]
    return hits


def benchreg_scorer(root: Path, preds: Path) -> int:
    from benchreg import RunOptions, load_task, run_task

    spec = load_task("molp2s/gap").model_copy(update={"data": ["data/big"]})
    result = run_task(
        spec,
        view="correct",
        roots={"molp2s": str(root)},
        options=RunOptions(progress=False),
        system_cfg={"name": "predictions", "path": str(preds)},
    )
    return int(result.counts["hits"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--side", choices=["minimal", "benchreg"], help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        root, preds = args.data / "release", args.data / "predictions.jsonl"
        fn = minimal_scorer if args.side == "minimal" else benchreg_scorer
        print(json.dumps({"hits": fn(root, preds)}))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _, _, distinct = build(folder, args.records)
        me = [sys.executable, "-m", "bench.molp2s_100k", "--data", str(folder), "--side"]
        sides = [
            Side("minimal stdlib scorer (reference)", [*me, "minimal"]),
            *cold_and_warm(
                [*me, "benchreg"],
                folder,
                "benchreg, first run (empty validation cache)",
                "benchreg, repeated run (unchanged data)",
            ),
        ]
        measure(sides, args.repeats)
        hits = {json.loads(o.strip().splitlines()[-1])["hits"] for s in sides for o in s.outputs}
        assert len(hits) == 1, hits
    print(f"MolP2S, {args.records:,} records ({distinct:,} distinct SMILES), predictions scoring, "
          f"same hits on every side: {hits.pop():,}")
    print(report(sides, sides[0], per=args.records, unit="records"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
