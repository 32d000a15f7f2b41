"""Benchmark: score the 16 PromptCBLUE tasks on the reference dev set replicated to 8,000 samples.

Run by hand: `python bench/cblue_scoring.py [--copies 100] [--repeats 3] [--boot 1000]`.
Needs ../shared/data/promptcblue (read in place; the replicated files go to a temp folder).

Predictions (structured, one results.json): the 7 extraction tasks from perturb_drop_last, the 7
classification tasks from perturb_cls_relabel, MedDG and IMCS-V2-MRG answered with another
sample's gold (so ROUGE has real work). Also scored: the same split's `target` texts as text
predictions (parser path). Printed per task family: wall time (median of the repeats), samples per
second, and the ratio against a baseline measured in the same run: a direct computation of the
same official scores with scikit-learn / rouge_chinese on in-memory lists (no loading, checking,
prediction reading or bootstrap CIs). Columns: `ours s` full runs (structured results.json,
with the bootstrap CIs of the primary metric's outputs, resampled from per-sample statistics),
`no-CI s` the same with a single resample, `text s` full runs on text predictions (parsing
included), `direct s` the baseline.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchreg import RunOptions, load_task, run_task
from benchreg.families.cblue.catalogue import TASK_NAMES, TASKS

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "promptcblue"
FAMILIES = {
    "extraction": [t for t in TASK_NAMES if TASKS[t].kind == "extraction"],
    "classification": [t for t in TASK_NAMES if TASKS[t].kind == "classification"],
    "generation": [t for t in TASK_NAMES if TASKS[t].kind in ("reply", "report")],
}


def build(folder: Path, copies: int) -> tuple[Path, Path]:
    rows = [json.loads(x) for x in (SHARED / "raw" / "dev.json").read_text("utf-8").splitlines()]
    gold = json.loads((SHARED / "raw" / "dev_structured.json").read_text("utf-8"))
    drop = json.loads((SHARED / "reference" / "perturb_drop_last.json").read_text("utf-8"))
    relabel = json.loads((SHARED / "reference" / "perturb_cls_relabel.json").read_text("utf-8"))
    preds: dict[str, list[dict[str, Any]]] = {}
    for task in TASK_NAMES:
        kind = TASKS[task].kind
        if kind == "extraction":
            preds[task] = drop[task]
        elif kind == "classification":
            preds[task] = relabel[task]
        else:  # another sample's gold answer
            answers = [e["answer"] for e in gold[task]]
            preds[task] = [
                {"sample_id": e["sample_id"], "answer": answers[(i + 1) % len(answers)]}
                for i, e in enumerate(gold[task])
            ]

    def copy_id(sample_id: str, k: int) -> str:
        return f"{sample_id}~{k}"

    with (folder / "dev.json").open("w", encoding="utf-8") as handle:
        for k in range(copies):
            for row in rows:
                handle.write(
                    json.dumps(
                        {**row, "sample_id": copy_id(row["sample_id"], k)}, ensure_ascii=False
                    )
                    + "\n"
                )

    def replicate(data: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
        return {
            task: [
                {**e, "sample_id": copy_id(e["sample_id"], k)} for k in range(copies) for e in es
            ]
            for task, es in data.items()
        }

    (folder / "dev_structured.json").write_text(json.dumps(replicate(gold), ensure_ascii=False))
    results = folder / "results.json"
    results.write_text(json.dumps(replicate(preds), ensure_ascii=False))
    return results, folder / "dev.json"


def clear_file_caches() -> None:
    from benchreg.core.load import forget

    forget()


def run_all(prediction_file: Path, root: Path, boot: int) -> dict[str, float]:
    """Wall seconds per task for a full run (load, read, parse/check, score, CIs)."""
    clear_file_caches()
    seconds = {}
    for task in TASK_NAMES:
        tic = time.perf_counter()
        run_task(
            load_task(f"cblue/{task}"),
            view=None,
            system_cfg={"name": "predictions", "path": str(prediction_file)},
            roots={"cblue": str(root)},
            options=RunOptions(n_boot=boot, progress=False),
        )
        seconds[task] = time.perf_counter() - tic
    return seconds


def direct_scorers() -> dict[str, Callable[[list[Any], list[Any]], Any]]:
    """The official computations, straight on answer lists (the baseline)."""
    import os

    from rouge_chinese import Rouge
    from sklearn.metrics import classification_report

    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    from transformers import BasicTokenizer

    tokenizer = BasicTokenizer(tokenize_chinese_chars=True)

    def spaced(text: str) -> str:
        return " ".join(tokenizer.tokenize(text)).strip() or "无 。"

    def extraction(gold: list[Any], pred: list[Any]) -> Any:
        tp = fp = fn = 0
        for g, p in zip(gold, pred, strict=True):
            gs = {tuple(json.dumps(i[k], ensure_ascii=False) for k in sorted(i)) for i in g}
            ps = {tuple(json.dumps(i[k], ensure_ascii=False) for k in sorted(i)) for i in p}
            tp, fp, fn = tp + len(gs & ps), fp + len(ps - gs), fn + len(gs - ps)
        return tp, fp, fn

    def classification(gold: list[Any], pred: list[Any]) -> Any:
        return classification_report(gold, pred, output_dict=True, zero_division=0)

    def reply(gold: list[Any], pred: list[Any]) -> Any:
        return Rouge().get_scores([spaced(p) for p in pred], [spaced(g) for g in gold], avg=True)

    def report(gold: list[Any], pred: list[Any]) -> Any:
        hyps = [spaced(p.get(k, "").strip()) for g, p in zip(gold, pred, strict=True) for k in g]
        refs = [spaced(g[k].strip()) for g in gold for k in g]
        return Rouge().get_scores(hyps, refs, avg=True)

    return {
        "extraction": extraction,
        "classification": classification,
        "reply": reply,
        "report": report,
    }


def run_direct(results: Path, gold_file: Path) -> dict[str, float]:
    gold = json.loads(gold_file.read_text("utf-8"))
    preds = json.loads(results.read_text("utf-8"))
    scorers = direct_scorers()
    seconds = {}
    for task in TASK_NAMES:
        g = [e["answer"] for e in gold[task]]
        p = [e["answer"] for e in preds[task]]
        tic = time.perf_counter()
        scorers[TASKS[task].kind](g, p)
        seconds[task] = time.perf_counter() - tic
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=100, help="80 dev samples x copies")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap resamples per task")
    args = parser.parse_args()
    if not SHARED.is_dir():
        print(f"reference data not found at {SHARED}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        results, text = build(root, args.copies)
        n_total = 80 * args.copies
        run_all(results, root, 10)  # warm-up: imports, tokenizer, rouge
        runs: dict[str, list[dict[str, float]]] = {
            "structured": [],
            "no_ci": [],
            "text": [],
            "direct": [],
        }
        for _ in range(args.repeats):
            runs["structured"].append(run_all(results, root, args.boot))
            runs["no_ci"].append(run_all(results, root, 1))
            runs["text"].append(run_all(text, root, args.boot))
            runs["direct"].append(run_direct(results, root / "dev_structured.json"))

    def median_of(kind: str, tasks: list[str]) -> float:
        return statistics.median(sum(r[t] for t in tasks) for r in runs[kind])

    print(
        f"PromptCBLUE scoring, {n_total} samples ({args.copies} x 80), {args.boot} bootstrap "
        f"resamples per task, median of {args.repeats} repeats"
    )
    header = (
        f"{'family':<15}{'samples':>8}{'ours s':>9}{'samples/s':>11}{'no-CI s':>9}{'text s':>9}"
        f"{'direct s':>10}{'ours/direct':>13}{'no-CI/direct':>14}"
    )
    print(header)
    print("-" * len(header))
    per_task = n_total // 16
    for family, tasks in [*FAMILIES.items(), ("all 16 tasks", list(TASK_NAMES))]:
        n = per_task * len(tasks)
        ours, no_ci, text_s, direct = (
            median_of(k, tasks) for k in ("structured", "no_ci", "text", "direct")
        )
        print(
            f"{family:<15}{n:>8}{ours:>9.2f}{n / ours:>11.0f}{no_ci:>9.2f}{text_s:>9.2f}"
            f"{direct:>10.3f}{ours / direct:>13.1f}{no_ci / direct:>14.1f}"
        )
    slowest = max(TASK_NAMES, key=lambda t: statistics.median(r[t] for r in runs["structured"]))
    print(
        f"slowest task: {slowest} "
        f"({statistics.median(r[slowest] for r in runs['structured']):.2f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
