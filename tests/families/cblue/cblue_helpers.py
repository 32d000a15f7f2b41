"""Helpers for the PromptCBLUE tests: run tasks through `benchreg.run_task`, read references."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchreg import RunOptions, RunResult, load_task, run_task
from benchreg.core import registry
from benchreg.core.metric import Metric
from benchreg.core.pipeline import data_root_for, load_dataset
from benchreg.core.types import Dataset, Prediction, Sample
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


def row(sample_id: str, task: str = "KUAKE-IR", target: str = "相关", **over: object) -> dict:
    base = {
        "input": f"医疗搜索：问题{sample_id}\n回答内容：……\n选项: 相关，不相关\n答：",
        "target": target,
        "answer_choices": ["相关", "不相关"],
        "task_type": "matching",
        "task_dataset": task,
        "sample_id": sample_id,
    }
    return {**base, **over}


def load(task: str, root: Path | None, view: str | None = None) -> Dataset:
    spec = load_task(f"cblue/{task}")
    return load_dataset(spec, spec.resolve_view(view), data_root_for(spec, {"cblue": root}))


TOL = 1e-9


def reference_scores(reference: Path, name: str, task: str) -> dict[str, float]:
    return load_json(reference / f"{name}.scores.json")["tasks"][task]["scores"]


def assert_scores(result: RunResult, expected: dict[str, float]) -> None:
    ours = scores_of(result)
    for name, value in expected.items():
        assert ours[name] == pytest.approx(value, abs=TOL), name


def scores_of(result: RunResult) -> dict[str, float]:
    return {name: m.value for name, m in result.metrics.items()}


def primary_of(result: RunResult) -> float:
    return result.metrics[result.primary].value


def parse_text(task: str, text: str, sample: Sample) -> Any:
    """Parse ``text`` with the parser the task entry `cblue/<task>` names."""
    ref = load_task(f"cblue/{task}").parser
    assert ref is not None
    return registry.parsers.get(ref.name)(text, sample, **ref.params)


def evaluate(
    metric: Metric, samples: list[Sample], predictions: list[Prediction]
) -> tuple[dict[str, float], dict[str, Any]]:
    """A metric's values and detail over the given samples, as the core computes the point."""
    stats = metric.stats(samples, predictions)
    n = len(samples)
    values = metric.reduce(metric.totals(stats, np.ones((1, n)))[0], n)
    return dict(zip(metric.names, map(float, values), strict=True)), metric.detail(stats)


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
