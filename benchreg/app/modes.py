"""What a job does, per `mode=`: run (evaluate), validate (check the data), prompts (export).

Each mode hands the bound task to the core (:func:`benchreg.core.run.evaluate` for a run,
:func:`benchreg.core.pipeline.prepare` for the others) and prints or writes what it returns.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from loguru import logger
from omegaconf import DictConfig

from benchreg.app import logs
from benchreg.app.config import run_options, to_dict
from benchreg.core.errors import BenchregError, IncompleteRunError
from benchreg.core.io import atomic_write_json, atomic_write_jsonl
from benchreg.core.outputs import incomplete_message
from benchreg.core.pipeline import prepare
from benchreg.core.run import RunOutput, evaluate
from benchreg.core.summary import is_incomplete, plural, run_table, support
from benchreg.core.task import Task

PROMPTS_FILE = "prompts.jsonl"
VALIDATION_FILE = "validation.json"


def run(task: Task, cfg: DictConfig, out_dir: Path, *, multirun: bool = False) -> dict[str, Any]:
    """Evaluate into ``out_dir``: claimed, resumed (same run, unfinished), reused (same run,
    finished, in a sweep) or refused (another run) before any system is asked."""
    evaluation = evaluate(
        task,
        view=cfg.get("view"),
        system_cfg=to_dict(cfg.model),
        roots=to_dict(cfg.roots),
        options=run_options(cfg),
        output=RunOutput(out_dir, to_dict(cfg), reuse_finished=multirun),
    )
    record = evaluation.record or {}
    if multirun and not logs.verbose():
        print(job_line(record, out_dir, reused=evaluation.reused))
    else:
        if evaluation.reused:
            print(f"already finished, kept as it is: {out_dir}")
        print(run_table(record, answered=True))
        print(f"outputs: {out_dir}")
    if record.get("complete") is False:
        raise IncompleteRunError(incomplete_message(record), where=out_dir)
    if record.get("errors_accepted"):
        logger.warning(
            f"{record['errors_accepted']} failed requests were scored as wrong answers "
            "(run.accept_errors=true)"
        )
    warn_truncated(record)
    return record


def job_line(record: dict[str, Any], out_dir: Path, *, reused: bool = False) -> str:
    """A sweep job's result in one line (its full table: BENCHREG_VERBOSE=1, or its folder's
    metrics.json): `<task> [<view>] <model>: accuracy 0.3125 [0.1416, 0.5560] n/denominator ...`."""
    metric = (record.get("metrics") or {}).get(record.get("primary")) or {}
    value = metric.get("value")
    shown = f"{value:.4f}" if isinstance(value, float) else str(value)
    ci = metric.get("ci95") or []
    if len(ci) == 2 and all(isinstance(c, float | int) for c in ci):
        shown += f" [{ci[0]:.4f}, {ci[1]:.4f}]"
    sup = support(record, metric)
    if sup.text:
        shown += f" n/denominator {sup.text}"
    if sup.not_ok_text:
        shown += f" (not ok: {sup.not_ok_text})"
    view = f" [{record['view']}]" if record.get("view") else ""
    state = " INCOMPLETE" if is_incomplete(record) else ""
    kept = " (already finished, kept as it is)" if reused else ""
    return (
        f"{record.get('task')}{view} {record.get('model')}: {record.get('primary')} {shown}"
        f"{state}{kept} -> {out_dir.name}"
    )


TRUNCATION_WARNING_SHARE = 0.05


def warn_truncated(record: dict[str, Any]) -> None:
    """One line when more than a few answers stopped at the token limit, saying what they
    became (the statuses actually given, from the record's `truncated_as`)."""
    n, cut = record.get("n") or 0, record.get("truncated") or 0
    if n and cut / n > TRUNCATION_WARNING_SHARE:
        logger.warning(
            f"{cut} of {n} answers stopped at the token limit (finish_reason: length)"
            f"{truncated_outcome(record.get('truncated_as'))}: raise model.max_tokens"
        )


def truncated_outcome(became: Any) -> str:
    """`: status 4 invalid, 2 ok; 2 of them read and flagged degraded (...)` from the record's
    `truncated_as` (empty for a record written before it existed). A cut reply the parser
    reads is flagged `degraded`; one it cannot read is `invalid` and not flagged."""
    if not isinstance(became, dict) or not became.get("statuses"):
        return ""
    counts = ", ".join(f"{v} {k}" for k, v in sorted(became["statuses"].items()) if v)
    degraded = int(became.get("degraded") or 0)
    if not degraded:
        return f": status {counts}, none readable (so none flagged `degraded`)"
    return (
        f": status {counts}; {degraded} of them read and flagged `degraded` in samples.jsonl "
        "(scored as given; invalid in the strict view)"
    )


def validate(task: Task, cfg: DictConfig, out_dir: Path) -> dict[str, Any]:
    """Run the task's validators on all its data; the report's `errors` counts error findings."""
    options = replace(run_options(cfg), limit=None)
    prepared = prepare(
        task, view=cfg.get("view"), roots=to_dict(cfg.roots), options=options, announce=False
    )
    findings = prepared.findings
    for finding in findings:
        print(f"{finding.severity}: {finding}")
    errors = sum(1 for f in findings if f.severity == "error")
    records = len(prepared.dataset.samples)
    report = {
        "task": task.name,
        "view": prepared.view,
        "records": records,
        "errors": errors,
        "findings": [
            {"where": f.where, "message": f.message, "severity": f.severity} for f in findings
        ],
    }
    path = out_dir / VALIDATION_FILE
    atomic_write_json(path, report)
    print(
        f"{task.name}: {plural(records, 'record')} checked, {plural(errors, 'error')}, "
        f"{plural(len(findings) - errors, 'warning')} "
        f"({plural(len(task.validators), 'validator')})"
    )
    print(f"report: {path}")
    return report


def prompts(task: Task, cfg: DictConfig, out_dir: Path) -> Path:
    """Write the rendered prompts (one row per sample) for a model run outside benchreg."""
    if task.prompt is None:
        raise BenchregError(
            f"task {task.name} has no prompt renderer", fix="mode=prompts needs a `prompt` entry"
        )
    prepared = prepare(
        task, view=cfg.get("view"), roots=to_dict(cfg.roots), options=run_options(cfg)
    )
    samples = prepared.samples
    rows = [
        {
            "id": sample.id,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "answer_schema": task.answer_schema.name,
            "parser": task.parser.name if task.parser else None,
        }
        for sample, messages in zip(samples, prepared.render_prompts(samples), strict=True)
    ]
    path = out_dir / PROMPTS_FILE
    atomic_write_jsonl(path, rows)
    view_arg = f" view={prepared.view}" if prepared.view else ""
    print(f"wrote {len(rows)} prompts to {path}")
    print(
        f"score a model's answers (in the {task.family} predictions format) with: "
        f"python -m benchreg task={task.name}{view_arg} model=predictions model.path=<file>"
    )
    return path
