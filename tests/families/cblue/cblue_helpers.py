"""Helpers for the PromptCBLUE tests: run tasks through `benchreg.run_task`, read references."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchreg import RunOptions, RunResult, load_task, run_task
from benchreg.families.cblue.catalogue import TASK_NAMES

FAST = RunOptions(n_boot=50, progress=False)


def run_cblue(
    task: str,
    predictions: Path | None,
    root: Path | None,
    *,
    view: str | None = None,
    system: str = "predictions",
) -> RunResult:
    spec = load_task(f"cblue/{task}")
    system_cfg: dict[str, Any] = {"name": system}
    if predictions is not None:
        system_cfg["path"] = str(predictions)
    roots = {"cblue": str(root)} if root is not None else {}
    return run_task(spec, view=view, system_cfg=system_cfg, roots=roots, options=FAST)


def scores_of(result: RunResult) -> dict[str, float]:
    return {name: m.value for name, m in result.metrics.items()}


def primary_of(result: RunResult) -> float:
    return result.metrics[result.spec.primary.output_name].value


def score_all(predictions: Path, root: Path) -> dict[str, RunResult]:
    return {task: run_cblue(task, predictions, root) for task in TASK_NAMES}


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
