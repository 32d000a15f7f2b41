"""Benchmark: scoring a reference-size MolP2S release (15 directories x 3 views, 5,742 records).

Run by hand, from the project root:  python -m bench.molp2s_scoring [--repeats 5]
(the release is written by the generator in `builders/molp2s/`).

Compares, in the same run and on the same generated release and predictions files:
- baseline: a minimal stdlib scorer (read tasks, labels, predictions; count hits), the work the
  release's own `score_tasks.py` does;
- benchreg without RDKit checks (`check_smiles: false` in the loader params);
- benchreg as shipped (every masked and candidate SMILES parsed by RDKit on load).
Prints the median wall time of each and its ratio to the baseline.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchreg import RunOptions, load_task, run_task
from builders.molp2s import generate

VIEWS = ("correct", "shuffled", "counterfactual")


def write_predictions(root: Path, out: Path) -> None:
    rng = random.Random(0)
    for directory in sorted(generate.REFERENCE_COUNTERFACTUAL):
        for view in VIEWS:
            lines = (root / "data" / directory / f"{view}.jsonl").read_text().splitlines()
            with (out / f"{directory}.{view}.jsonl").open("w") as handle:
                for line in lines:
                    record = json.loads(line)
                    n = len(record["candidate_completed_smiles"])
                    handle.write(
                        json.dumps(
                            {
                                "record_id": record["record_id"],
                                "selected_candidate_index": rng.randrange(n),
                            }
                        )
                        + "\n"
                    )


def minimal_scorer(root: Path, preds: Path) -> int:
    hits = 0
    for directory in sorted(generate.REFERENCE_COUNTERFACTUAL):
        for view in VIEWS:
            folder = root / "data" / directory
            labels = {}
            for line in (folder / f"{view}.labels.jsonl").read_text().splitlines():
                obj = json.loads(line)
                labels[obj["record_id"]] = obj["label"]
            for line in (folder / f"{view}.jsonl").read_text().splitlines():
                json.loads(line)
            for line in (preds / f"{directory}.{view}.jsonl").read_text().splitlines():
                obj = json.loads(line)
                hits += obj["selected_candidate_index"] == labels.get(obj["record_id"])
    return hits


def benchreg_scorer(root: Path, preds: Path, check_smiles: bool) -> int:
    hits = 0
    options = RunOptions(n_boot=0, progress=False)
    for directory in sorted(generate.REFERENCE_COUNTERFACTUAL):
        spec = load_task(f"molp2s/{directory}")
        spec = spec.model_copy(
            update={
                "loader": spec.loader.model_copy(update={"params": {"check_smiles": check_smiles}})
            }
        )
        for view in VIEWS:
            result = run_task(
                spec,
                view=view,
                roots={"molp2s": str(root)},
                options=options,
                system_cfg={
                    "name": "predictions",
                    "path": str(preds / f"{directory}.{view}.jsonl"),
                },
            )
            # random indices are always in range: every record is scored as given
            assert result.statuses["ok"] == len(result.samples), result.statuses
            hits += result.counts["hits"]
    return hits


def timed(fn: Callable[[], int], repeats: int) -> tuple[float, int]:
    times, value = [], 0
    for _ in range(repeats):
        tic = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - tic)
    return statistics.median(times), value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root, preds = Path(tmp) / "release", Path(tmp) / "preds"
        preds.mkdir()
        generate.generate_release(
            root,
            n_records=generate.REFERENCE_RECORDS,
            counterfactual_sizes=generate.REFERENCE_COUNTERFACTUAL,
            seed=0,
        )
        write_predictions(root, preds)
        base, hits = timed(lambda: minimal_scorer(root, preds), args.repeats)
        rows = [("minimal stdlib scorer (baseline)", base, hits)]
        for label, check in (("benchreg, no RDKit checks", False), ("benchreg, as shipped", True)):
            seconds, value = timed(lambda c=check: benchreg_scorer(root, preds, c), args.repeats)
            assert value == hits, (label, value, hits)
            rows.append((label, seconds, value))
    print(f"5,742 records, 45 task-views, median of {args.repeats} runs (same hits: {hits})")
    for label, seconds, _ in rows:
        print(f"  {label:<34} {seconds * 1000:8.1f} ms   x{seconds / base:6.1f} baseline")


if __name__ == "__main__":
    main()
