"""Benchmark: the documented reaction-MC predictions command at 100,000 questions vs a minimal
stdlib scorer, on an indented and on a compact question file.

Run by hand, from the project root:

    python -m bench.reaction_mc_100k [--questions 100000] [--repeats 5] [--layouts indented compact]

Data (temp folder): the embedded sample's `single_varying` questions, cycled with new ids
(`bench<k>_table_0_q1`) into one `multiple_choice_single_varying.json` of N questions, written
twice: pretty-printed (`json.dumps(..., indent=2)`, ~3.2 kB a question) and compact (one line,
`json.dumps(...)`, ~1.9 kB), each in its own data root; and a predictions file `{id: index}`
with a seeded random option per question.

Sides, each a whole process (start-up and imports included), wall and peak RSS of the whole
process tree (bench/_harness.py), paired, fresh output folder per run:
- `minimal scorer` (reference, one per layout): stdlib only, `json.loads` of the file, the
  structural rules of `records.py` (options non-empty, the five aligned meta lists as long as
  the options, answer a non-empty list of in-range ints, id pattern and suffix, question_type,
  target_key), ids unique, then hits = predicted index among the options of the best
  `meta.effective_scores` (benchreg's `exact_match_accuracy`);
- `benchreg, first run`: the documented command, `python -m benchreg
  task=reaction_mc/single_varying model=predictions model.path=PRED roots.reaction_mc=ROOT
  hydra.run.dir=OUT/run`, default CIs, with an empty benchreg cache folder;
- `benchreg, repeated run`: the same with the cache folder of an earlier run (unchanged file:
  the questions and the consistency validator's findings are reused, see docs/scale.md).
Every benchreg run is checked: its `metrics.json` scored all N questions (statuses ok = N,
denominator N), and its hits equal the minimal scorer's. `BENCH_BENCHREG_ROOT=DIR` runs the
benchreg of another tree (before/after in one session).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

FILE = "multiple_choice_single_varying.json"
ALIGNED = (
    "yields",
    "effective_scores",
    "scores",
    "option_relative_scores",
    "option_source_entries",
)
ID_RE = re.compile(r"^(?P<table>.+)_q(?P<n>\d+)(?P<suffix>_ref_control|_ref)?$")


def minimal_scorer(data: Path, preds: Path) -> dict[str, int]:
    questions = json.loads((data / FILE).read_text("utf-8"))
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
    del questions
    predictions = json.loads(preds.read_text("utf-8"))
    return {"hits": sum(1 for qid, index in predictions.items() if index in gold.get(qid, ()))}


LAYOUTS = {"indented": {"indent": 2}, "compact": {}}


def build(folder: Path, n: int, layouts: list[str]) -> dict[str, Path]:
    import random

    sample = Path(__file__).resolve().parents[1] / "benchreg/families/reaction_mc/sample" / FILE
    pool = json.loads(sample.read_text("utf-8"))
    rng = random.Random(0)
    questions, preds = [], {}
    for k in range(n):
        question = {**pool[k % len(pool)], "id": f"bench{k}_table_0_q1"}
        questions.append(question)
        preds[question["id"]] = rng.randrange(len(question["options"]))
    roots = {}
    for layout in layouts:
        root = folder / f"data-{layout}"
        root.mkdir()
        text = json.dumps(questions, ensure_ascii=False, **LAYOUTS[layout])  # type: ignore[arg-type]
        (root / FILE).write_text(text, encoding="utf-8")
        roots[layout] = root
    (folder / "predictions.json").write_text(json.dumps(preds))
    return roots


def scored(out: Path, n: int) -> tuple[int, str]:
    """The exact-match hits of a benchreg run in ``out``, checked to have scored all ``n``, and
    where its samples came from (`dataset_info.loaded` in provenance.json: read, cache)."""
    metrics = json.loads((out / "run" / "metrics.json").read_text("utf-8"))
    exact = metrics["metrics"]["exact_match_accuracy"]
    if (metrics["n"], exact["denominator"], metrics["statuses"]["ok"]) != (n, n, n):
        raise AssertionError(f"not all {n:,} questions scored: {metrics['statuses']}")
    info = json.loads((out / "run" / "provenance.json").read_text("utf-8")).get("dataset_info", {})
    return round(exact["value"] * exact["denominator"]), str(info.get("loaded"))


def main() -> int:
    import argparse
    import tempfile

    from bench._harness import Side, benchreg_cli, benchreg_root, cold_and_warm, measure, report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--layouts", nargs="+", choices=list(LAYOUTS), default=list(LAYOUTS))
    args = parser.parse_args()
    n = args.questions
    hits: list[int] = []
    tables = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        roots = build(folder, n, args.layouts)
        preds = folder / "predictions.json"

        def check_minimal(_out: Path, stdout: str) -> None:
            hits.append(json.loads(stdout.strip().splitlines()[-1])["hits"])

        reads: dict[str, int] = {}

        def check_benchreg(out: Path, _stdout: str) -> None:
            found, loaded = scored(out, n)
            hits.append(found)
            reads[loaded] = reads.get(loaded, 0) + 1

        groups, sides = [], []
        for layout, root in roots.items():
            (folder / layout).mkdir()
            argv, env, cwd = benchreg_cli(
                "task=reaction_mc/single_varying",
                "model=predictions",
                f"model.path={preds}",
                f"roots.reaction_mc={root}",
                "hydra.run.dir={out}/run",
            )
            me = [
                sys.executable,
                "-m",
                "bench.reaction_mc_100k",
                "--side-minimal",
                str(root),
                str(preds),
            ]
            group = [
                Side("minimal stdlib scorer (reference)", me, check=check_minimal),
                *cold_and_warm(
                    argv,
                    folder / layout,
                    "benchreg CLI, first run (empty cache)",
                    "benchreg CLI, repeated run (unchanged file)",
                    env=env,
                    cwd=cwd,
                    check=check_benchreg,
                ),
            ]
            size = (root / FILE).stat().st_size
            groups.append((layout, size, group))
            sides += group
        measure(sides, args.repeats)
        for layout, size, group in groups:
            tables.append(
                f"{layout} file ({size / 2**20:.0f} MiB JSON):\n"
                + report(group, group[0], per=n, unit="questions")
            )
    if len(set(hits)) != 1:
        raise AssertionError(f"hits differ: {hits}")
    print(
        f"reaction-MC single_varying, {n:,} questions; same hits on every side and run: "
        f"{hits[0]:,}; every benchreg run scored all {n:,} questions (metrics.json); "
        f"benchreg of {benchreg_root()}"
    )
    print(
        "command: python -m benchreg task=reaction_mc/single_varying model=predictions "
        "model.path=PRED roots.reaction_mc=ROOT hydra.run.dir=OUT/run"
    )
    print("\n".join(tables))
    print(
        "benchreg runs by where their samples came from (dataset_info.loaded): "
        + ", ".join(f"{how} {count}" for how, count in sorted(reads.items()))
    )
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--side-minimal"]:  # the reference side: nothing else imported
        print(json.dumps(minimal_scorer(Path(sys.argv[2]), Path(sys.argv[3]))))
        sys.exit(0)
    sys.exit(main())
