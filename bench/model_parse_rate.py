"""Parseable-answer rate with and without structured output, per family, on the local model.

Run by hand (needs the `llama` extra; about 40 minutes on 2 cores the first time, seconds
after, from the response cache in `--cache-dir`):

    python bench/model_parse_rate.py [--cache-dir /tmp/benchreg-parse-cache] [--json out.json]

Every sample of the embedded sample of MolP2S (gap: views correct, counterfactual, shuffled),
reaction-MC (single_varying, all_varying) and the 16 PromptCBLUE tasks is asked of
`model=llama_cpp` (the packaged SmolLM2-135M-Instruct, its defaults: temperature 0,
max_tokens 512) twice: `model.structured=off` (free text) and `model.structured=json_schema`
(the answer schema as response_format). "Parseable" = the answer passed the parser and the
answer schema's type check (status ok or out_of_range), i.e. not `invalid`; failed requests
(`error`) are counted apart. Retrieval is left out: it takes ranked results (or its baseline),
not chat answers.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from benchreg import RunOptions, load_task, run_task

RUNS: list[tuple[str, str, list[str | None]]] = [
    ("molp2s", "molp2s/gap", ["correct", "counterfactual", "shuffled"]),
    ("reaction_mc", "reaction_mc/single_varying", [None]),
    ("reaction_mc", "reaction_mc/all_varying", [None]),
    *[
        ("cblue", f"cblue/{name}", [None])
        for name in (
            "CHIP-CDEE",
            "CHIP-CDN",
            "CHIP-CTC",
            "CHIP-MDCFNPC",
            "CHIP-STS",
            "CMeEE-V2",
            "CMeIE",
            "IMCS-V2-DAC",
            "IMCS-V2-MRG",
            "IMCS-V2-NER",
            "IMCS-V2-SR",
            "KUAKE-IR",
            "KUAKE-QIC",
            "KUAKE-QQR",
            "KUAKE-QTR",
            "MedDG",
        )
    ],
]
MODES = ("off", "json_schema")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", default="/tmp/benchreg-parse-cache")
    parser.add_argument("--json", default=None, help="write the per-task counts here")
    parser.add_argument("--only", default=None, help="families to run, comma-separated")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    options = RunOptions(
        n_boot=0, progress=False, cache="read_write", cache_dir=args.cache_dir, batch_size=64
    )
    rows: list[dict] = []
    for family, task_name, views in RUNS:
        if wanted and family not in wanted:
            continue
        task = load_task(task_name)
        for view in views:
            for mode in MODES:
                tic = time.perf_counter()
                cfg = {"name": "llama_cpp", "structured": mode}
                result = run_task(task, view=view, system_cfg=cfg, options=options)
                statuses = Counter(result.statuses)
                stats = result.system_report.stats
                row = {
                    "family": family,
                    "task": task_name,
                    "view": view,
                    "structured": mode,
                    "n": len(result.samples),
                    **{k: statuses[k] for k in ("ok", "out_of_range", "invalid", "error")},
                    "length": sum(
                        1 for p in result.predictions if p.metadata.get("finish_reason") == "length"
                    ),
                    "invalid_at_length": sum(
                        1
                        for p in result.predictions
                        if p.status.value == "invalid"
                        and p.metadata.get("finish_reason") == "length"
                    ),
                    "empty": sum(1 for p in result.predictions if p.answer == []),
                    "degraded": sum(1 for p in result.predictions if p.degraded),
                    "seconds": round(time.perf_counter() - tic, 1),
                    "asked": stats.get("asked"),
                    "primary": result.primary,
                    "primary_value": result.metrics[result.primary].value,
                }
                rows.append(row)
                print(json.dumps(row, ensure_ascii=False), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    print()
    print(table(rows))


def table(rows: list[dict]) -> str:
    lines = [
        "| family | structured | samples | parseable (not invalid) | in range (ok) "
        "| invalid | of which at max_tokens | empty answers (`[]`) | degraded | s / asked sample |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for family in dict.fromkeys(r["family"] for r in rows):
        for mode in MODES:
            mine = [r for r in rows if r["family"] == family and r["structured"] == mode]
            n = sum(r["n"] - r["error"] for r in mine)
            parsed = sum(r["ok"] + r["out_of_range"] for r in mine)
            ok = sum(r["ok"] for r in mine)
            invalid = sum(r["invalid"] for r in mine)
            cut = sum(r["invalid_at_length"] for r in mine)
            empty = sum(r["empty"] for r in mine)
            degraded = sum(r["degraded"] for r in mine)
            asked = sum(r["asked"] or 0 for r in mine)
            seconds = f"{sum(r['seconds'] for r in mine) / asked:.2f}" if asked else "cached"
            lines.append(
                f"| {family} | {mode} | {n} | {parsed} ({parsed / n:.0%}) | {ok} ({ok / n:.0%}) "
                f"| {invalid} | {cut} | {empty} | {degraded} | {seconds} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
