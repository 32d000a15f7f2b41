"""Benchmark: the documented MolP2S predictions command at 100,000 records vs a minimal scorer.

Run by hand, from the project root:

    python -m bench.molp2s_100k [--records 100000] [--repeats 5]

Data (written to a temp folder): a reference-size release is generated (`builders/molp2s`,
136 source records, 15 directories x 3 views, 5,742 task lines); its task lines are pooled and
cycled, with new record ids, into one `data/gap/correct.jsonl` of N records (+ labels), and a
predictions file with a seeded random candidate index per record. Like the release itself
(the same molecules in every property directory), candidate SMILES repeat across records; the
number of distinct SMILES is printed.

Sides, each a whole process (start-up and imports included), wall and peak RSS of the process
tree (bench/_harness.py), paired, each run into a fresh output folder:
- `minimal scorer` (reference): stdlib only, the same rules without RDKit, read line by line as
  a careful stdlib script would: JSON per line, record ids unique, every task has one label and
  vice versa, label within the candidates, predictions joined by record id (duplicate ids
  rejected, missing = wrong), hits counted;
- `benchreg, first run`: the documented command, `python -m benchreg task=molp2s/gap
  model=predictions model.path=PRED roots.molp2s=ROOT hydra.run.dir=OUT/run`, with an empty
  benchreg cache folder (`BENCHREG_CACHE_DIR`): every distinct SMILES parsed by RDKit once;
- `benchreg, repeated run`: the same command with the cache folder of an earlier run (unchanged
  files: RDKit checks skipped and the samples read back from the loaded-data cache, see
  docs/scale.md).
Every benchreg run is checked: its `metrics.json` holds all N records scored (statuses ok = N,
denominator N), and its hits equal the minimal scorer's. `BENCH_BENCHREG_ROOT=DIR` runs the
benchreg of another tree (before/after in one session).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def minimal_scorer(root: Path, preds: Path) -> int:
    """The hits, by the rules above, in stdlib Python."""
    folder = root / "data" / "gap"
    tasks: dict[str, int] = {}
    with (folder / "correct.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            obj = json.loads(line)
            rid = obj["record_id"]
            if rid in tasks:
                raise ValueError(f"duplicate record_id {rid}")
            tasks[rid] = len(obj["candidate_completed_smiles"])
    labels: dict[str, int] = {}
    with (folder / "correct.labels.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            obj = json.loads(line)
            rid, label = obj["record_id"], obj["label"]
            if rid in labels or rid not in tasks or not 0 <= label < tasks[rid]:
                raise ValueError(f"bad label line for {rid}")
            labels[rid] = label
    if len(labels) != len(tasks):
        raise ValueError("records without a label")
    seen: set[str] = set()
    hits = 0
    with preds.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            obj = json.loads(line)
            rid = obj["record_id"]
            if rid in seen:
                raise ValueError(f"duplicate prediction {rid}")
            seen.add(rid)
            hits += rid in labels and obj.get("selected_candidate_index") == labels[rid]
    return hits


def build(folder: Path, n_records: int) -> tuple[Path, Path, int]:
    import random

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
    (root / "data" / "gap").mkdir(parents=True)
    rng = random.Random(0)
    smiles: set[str] = set()
    with (
        (root / "data" / "gap" / "correct.jsonl").open("w") as tasks,
        (root / "data" / "gap" / "correct.labels.jsonl").open("w") as labels_out,
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


def scored(out: Path, n: int) -> int:
    """The hits of a benchreg run in ``out``, checked to have scored all ``n`` records."""
    metrics = json.loads((out / "run" / "metrics.json").read_text("utf-8"))
    accuracy = metrics["metrics"]["accuracy"]
    if (metrics["n"], accuracy["denominator"], metrics["statuses"]["ok"]) != (n, n, n):
        raise AssertionError(f"not all {n:,} records scored: {metrics['statuses']}")
    if metrics["counts"]["tasks"] != n:
        raise AssertionError(f"tasks {metrics['counts']['tasks']} != {n}")
    return int(metrics["counts"]["hits"])


def main() -> int:
    import argparse
    import tempfile

    from bench._harness import Side, benchreg_cli, benchreg_root, cold_and_warm, measure, report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        root, preds, distinct = build(folder, args.records)
        hits: dict[str, list[int]] = {"minimal": [], "benchreg": []}

        def check_minimal(_out: Path, stdout: str) -> None:
            hits["minimal"].append(json.loads(stdout.strip().splitlines()[-1])["hits"])

        def check_benchreg(out: Path, _stdout: str) -> None:
            hits["benchreg"].append(scored(out, args.records))

        argv, env, cwd = benchreg_cli(
            "task=molp2s/gap",
            "model=predictions",
            f"model.path={preds}",
            f"roots.molp2s={root}",
            "hydra.run.dir={out}/run",
        )
        me = [sys.executable, "-m", "bench.molp2s_100k", "--side-minimal", str(root), str(preds)]
        sides = [
            Side("minimal stdlib scorer (reference)", me, check=check_minimal),
            *cold_and_warm(
                argv,
                folder,
                "benchreg CLI, first run (empty cache)",
                "benchreg CLI, repeated run (unchanged files)",
                env=env,
                cwd=cwd,
                check=check_benchreg,
            ),
        ]
        measure(sides, args.repeats)
    every = set(hits["minimal"]) | set(hits["benchreg"])
    if len(every) != 1:
        raise AssertionError(f"hits differ: {hits}")
    print(
        f"MolP2S, {args.records:,} records ({distinct:,} distinct SMILES), predictions "
        f"scoring, same hits on every side and run: {every.pop():,}; every benchreg run "
        f"scored all {args.records:,} records (metrics.json); benchreg of {benchreg_root()}"
    )
    print(
        "command: python -m benchreg task=molp2s/gap model=predictions model.path=PRED "
        "roots.molp2s=ROOT hydra.run.dir=OUT/run"
    )
    print(report(sides, sides[0], per=args.records, unit="records"))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--side-minimal"]:  # the reference side: nothing else imported
        print(json.dumps({"hits": minimal_scorer(Path(sys.argv[2]), Path(sys.argv[3]))}))
        sys.exit(0)
    sys.exit(main())
