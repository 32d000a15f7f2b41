"""Benchmark: PromptCBLUE, all 16 tasks, the documented CLI sweep vs the official evaluator.

Run by hand, from the project root (needs ../shared/data/promptcblue and a checkout of the upstream
repository michael-wzhu/PromptCBLUE, pinned commit b0753a61a7c1f4e1ae171109f8a59037ff0a5543; its
code is run in place, never copied into this repository):

    git clone https://github.com/michael-wzhu/PromptCBLUE /tmp/PromptCBLUE
    git -C /tmp/PromptCBLUE checkout b0753a61a7c1f4e1ae171109f8a59037ff0a5543
    python -m bench.cblue_official --official /tmp/PromptCBLUE [--copies 100 1000] [--repeats 5]

With ``BENCH_BENCHREG_ROOT=DIR`` the benchreg side runs the benchreg of another tree (see
bench/_harness.py), for before/after tables measured in one session.

Data: the reference dev set (16 tasks x 5 samples) replicated `copies` times (100 -> 8,000
samples, 1000 -> 80,000) with the predictions of bench/cblue_scoring.py (drop-last, relabel,
another sample's gold for the two generation tasks), written once as a `results.json`.

Sides, each a whole process (wall from start to exit, peak RSS of the process tree, see
bench/_harness.py), paired, every run into a fresh output folder:
- `official`: ``python src/evaluation/evaluate.py input_param.json out.json`` in the checkout, on
  the same gold and predictions (CMeIE renamed CMeIE-V2; one identical dummy sample for the two
  tasks outside the toy split, Text2DT and CMedCausal, as in the reference scores' README);
- `benchreg, first`: the documented sweep (README, "Sweeps")
  ``python -m benchreg -m 'task=glob(cblue/*)' model=predictions model.path=results.json
  roots.cblue=DIR hydra.sweep.dir={out}/sweep``, default CIs (1,000 bootstrap resamples),
  summary, analyses and report included, with an empty benchreg cache folder
  (`BENCHREG_CACHE_DIR`);
- `benchreg, repeated`: the same with the cache folder of an earlier run on the same files (at
  80,000 samples, each task's samples and gold findings are read back from the loaded-data
  cache, docs/cblue.md; the predictions are read as in any run).
Checked after every run: the official score file holds a score; the sweep ran 16 jobs (none kept
from an earlier sweep), each finished, complete, with all its samples scored (n = denominator =
the task's samples). The overall score over the 16 tasks is checked equal (|diff| < 1e-9) on
both sides.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench._harness import Side, benchreg_cli, cold_and_warm, measure, report

N_TASKS = 16
DUMMY = {
    "Text2DT": [
        {
            "sample_id": "dummy",
            "answer": [{"role": "D", "triples": [["a", "b", "c"]], "logical_rel": "null"}],
        }
    ],
    "CMedCausal": [{"sample_id": "dummy", "answer": [{"a": "x"}]}],
}


def official_files(folder: Path, results: Path) -> Path:
    """Gold / predictions in the official evaluator's layout, and its input_param.json."""
    gold = json.loads((folder / "dev_structured.json").read_text("utf-8"))
    preds = json.loads(results.read_text("utf-8"))
    for data in (gold, preds):
        data["CMeIE-V2"] = data.pop("CMeIE")
        data.update(DUMMY)
    (folder / "official_gold.json").write_text(json.dumps(gold, ensure_ascii=False), "utf-8")
    (folder / "official_pred.json").write_text(json.dumps(preds, ensure_ascii=False), "utf-8")
    params = {
        "fileData": {
            "standardFilePath": str(folder / "official_gold.json"),
            "userFilePath": str(folder / "official_pred.json"),
        }
    }
    (folder / "input_param.json").write_text(json.dumps(params))
    return folder / "input_param.json"


def official_overall(out_file: Path) -> float:
    """Overall over the 16 toy tasks from the official score file (the dummies score 1 each)."""
    result = json.loads(out_file.read_text("utf-8"))
    if not result.get("success"):
        raise AssertionError(f"official evaluator failed: {result.get('errorMsg')}")
    return (float(result["score"]) / 100 * 18 - 2) / 16


def sweep_overall(sweep: Path, per_task: int) -> float:
    """The mean of the 16 jobs' primary metrics, after checking that 16 jobs ran and scored."""
    jobs = sorted(p for p in sweep.iterdir() if (p / "run.json").is_file())
    if len(jobs) != N_TASKS:
        raise AssertionError(f"{len(jobs)} job folders in {sweep}, expected {N_TASKS}")
    values = []
    for job in jobs:
        metrics = json.loads((job / "metrics.json").read_text("utf-8"))
        primary = metrics["metrics"][metrics["primary"]]
        if not metrics["complete"] or metrics["n"] != per_task:
            raise AssertionError(f"{job.name}: n={metrics['n']}, expected {per_task} (complete)")
        if primary["n"] != per_task or primary["denominator"] != per_task:
            raise AssertionError(f"{job.name}: {primary['n']}/{primary['denominator']} scored")
        values.append(primary["value"])
    return sum(values) / len(values)


def run_size(copies: int, evaluate: Path, repeats: int) -> None:
    """Both sides at ``80 * copies`` samples: measured, checked, compared, printed."""
    from bench.cblue_scoring import build

    per_task = 5 * copies
    overall: dict[str, list[float]] = {"official": [], "benchreg": []}

    def check_official(out: Path, _stdout: str) -> None:
        overall["official"].append(official_overall(out / "score.json"))

    def check_sweep(out: Path, _stdout: str) -> None:
        overall["benchreg"].append(sweep_overall(out / "sweep", per_task))

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        results, _ = build(folder, copies)
        params = official_files(folder, results)
        argv, env, cwd = benchreg_cli(
            "-m",
            "task=glob(cblue/*)",
            "model=predictions",
            f"model.path={results}",
            f"roots.cblue={folder}",
            "hydra.sweep.dir={out}/sweep",
        )
        sides = [
            Side(
                "official evaluate.py (reference)",
                [sys.executable, str(evaluate), str(params), "{out}/score.json"],
                check=check_official,
                cwd=str(evaluate.parent),
            ),
            *cold_and_warm(
                argv,
                folder,
                "benchreg sweep, first (empty cache)",
                "benchreg sweep, repeated (files seen before)",
                env=env,
                cwd=cwd,
                check=check_sweep,
            ),
        ]
        measure(sides, repeats)
    every = overall["official"] + overall["benchreg"]
    diff = max(every) - min(every)
    if diff >= 1e-9:
        raise AssertionError(f"overall differs: {overall}")
    print(
        f"PromptCBLUE, 16 tasks, {80 * copies:,} samples; overall over 16 tasks "
        f"{every[0]:.12f} on both sides (|diff| {diff:.1e}); 16 jobs ran, each scored "
        f"{per_task} samples"
    )
    print(report(sides, sides[0], per=80 * copies, unit="samples"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", type=Path, default=Path("/tmp/PromptCBLUE"))
    parser.add_argument("--copies", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    evaluate = args.official.resolve() / "src" / "evaluation" / "evaluate.py"
    if not evaluate.is_file():
        parser.error("--official DIR: a checkout of michael-wzhu/PromptCBLUE (see the header)")

    for copies in args.copies:
        run_size(copies, evaluate, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
