"""Benchmark: PromptCBLUE, all 16 tasks, benchreg vs the official evaluator, at 8,000 / 80,000.

Run by hand, from the project root (needs ../shared/data/promptcblue and a checkout of the upstream
repository michael-wzhu/PromptCBLUE, pinned commit b0753a61a7c1f4e1ae171109f8a59037ff0a5543; its
code is run in place, never copied into this repository):

    git clone https://github.com/michael-wzhu/PromptCBLUE /tmp/PromptCBLUE
    git -C /tmp/PromptCBLUE checkout b0753a61a7c1f4e1ae171109f8a59037ff0a5543
    python -m bench.cblue_official --official /tmp/PromptCBLUE [--copies 100 1000] [--repeats 3]

Data: the reference dev set (16 tasks x 5 samples) replicated `copies` times (100 -> 8,000
samples, 1000 -> 80,000) with the predictions of bench/cblue_scoring.py (drop-last, relabel,
another sample's gold for the two generation tasks), written once as a `results.json`.

Sides, each in its own process (whole-process wall and peak RSS, see bench/_harness.py):
- `official`: `python src/evaluation/evaluate.py input_param.json out.json` in the checkout, on
  the same gold and predictions (CMeIE renamed CMeIE-V2; one identical dummy sample for the two
  tasks outside the toy split, Text2DT and CMedCausal, as in the reference scores' README);
- `benchreg`: the 16 `cblue/*` tasks run one after the other in one process with
  `model=predictions` on that results.json, default CIs (1,000 bootstrap resamples).
The overall score over the 16 tasks is checked equal (|diff| < 1e-9) on both sides.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench._harness import Side, measure, report

DUMMY = {
    "Text2DT": [{"sample_id": "dummy", "answer": [
        {"role": "D", "triples": [["a", "b", "c"]], "logical_rel": "null"}]}],
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
    params = {"fileData": {"standardFilePath": str(folder / "official_gold.json"),
                           "userFilePath": str(folder / "official_pred.json")}}
    (folder / "input_param.json").write_text(json.dumps(params))
    return folder / "input_param.json"


def run_official(official: Path, folder: Path) -> float:
    """Overall over the 16 toy tasks from the official score map (dummies score 1 each)."""
    import runpy

    out = folder / "official_out.json"
    sys.argv = ["evaluate.py", str(folder / "input_param.json"), str(out)]
    sys.path.insert(0, str(official / "src" / "evaluation"))
    runpy.run_path(str(official / "src" / "evaluation" / "evaluate.py"), run_name="__main__")
    text = out.read_text("utf-8")
    result = json.loads(text)
    score = float(result.get("score", result.get("data", [{}])[0].get("score", 0)))
    return (score / 100 * 18 - 2) / 16


def run_benchreg(folder: Path) -> float:
    from benchreg import RunOptions, load_task, run_task
    from benchreg.families.cblue.catalogue import TASK_NAMES

    values = []
    for task in TASK_NAMES:
        result = run_task(
            load_task(f"cblue/{task}"),
            view=None,
            system_cfg={"name": "predictions", "path": str(folder / "results.json")},
            roots={"cblue": str(folder)},
            options=RunOptions(progress=False),
        )
        values.append(result.metrics[result.primary].value)
    return sum(values) / len(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", type=Path, required=False)
    parser.add_argument("--copies", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--side", choices=["official", "benchreg"], help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side == "official":
        print(json.dumps({"overall": run_official(args.official, args.data)}))
        return 0
    if args.side == "benchreg":
        print(json.dumps({"overall": run_benchreg(args.data)}))
        return 0
    if args.official is None or not (args.official / "src/evaluation/evaluate.py").is_file():
        parser.error("--official DIR: a checkout of michael-wzhu/PromptCBLUE (see the header)")
    from bench.cblue_scoring import build

    for copies in args.copies:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            results, _ = build(folder, copies)
            official_files(folder, results)
            me = [sys.executable, "-m", "bench.cblue_official", "--data", str(folder)]
            sides = [
                Side("official evaluate.py (reference)",
                     [*me, "--official", str(args.official.resolve()), "--side", "official"]),
                Side("benchreg, 16 tasks, default CIs", [*me, "--side", "benchreg"]),
            ]
            measure(sides, args.repeats)
            overall = [json.loads(o.strip().splitlines()[-1])["overall"]
                       for s in sides for o in s.outputs]
            assert max(overall) - min(overall) < 1e-9, overall
        print(f"PromptCBLUE, 16 tasks, {80 * copies:,} samples; overall over 16 tasks "
              f"{overall[0]:.12f} on both sides (|diff| {max(overall) - min(overall):.1e})")
        print(report(sides, sides[0], per=80 * copies, unit="samples"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
