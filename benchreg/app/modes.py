"""What a job does, per `mode=`: run (evaluate), validate (check the data), prompts (export)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from benchreg.app.config import run_options, to_dict
from benchreg.core.errors import BenchregError
from benchreg.core.io import atomic_write_json, atomic_write_jsonl, read_json
from benchreg.core.journal import Journal
from benchreg.core.records import METRICS_FILE, write_run
from benchreg.core.report import run_table
from benchreg.core.run import (
    aexecute,
    build_system_for,
    data_root_for,
    load_context,
    load_dataset,
    prepare_run,
    render_prompts,
    run_sync,
    run_validators,
    template_files,
)
from benchreg.core.runfolder import open_run_folder, run_fingerprint
from benchreg.core.spec import TaskSpec

PROMPTS_FILE = "prompts.jsonl"
VALIDATION_FILE = "validation.json"


def run(
    spec: TaskSpec, cfg: DictConfig, out_dir: Path, *, multirun: bool = False
) -> dict[str, Any]:
    """Evaluate into ``out_dir``: claimed, resumed (same run, unfinished), reused (same run,
    finished, in a sweep) or refused (another run) before any system is asked."""
    options = run_options(cfg)
    system_cfg = to_dict(cfg.model)
    prepared = prepare_run(spec, view=cfg.get("view"), roots=to_dict(cfg.roots), options=options)
    fingerprint = run_fingerprint(
        spec.model_dump(mode="json"),
        prepared.view,
        system_cfg,
        prepared.dataset.files,
        options.result_options(),
    )
    info = {"task": spec.name, "view": prepared.view, "model": system_cfg.get("name")}
    template_files(spec, prepared.data_root)  # present and inside their folders, before any work
    system = build_system_for(prepared, system_cfg, options)
    try:
        folder = open_run_folder(
            out_dir, fingerprint, info, overwrite=options.overwrite, reuse_finished=multirun
        )
    except BaseException:
        run_sync(system.aclose())
        raise
    try:
        if folder.finished:
            run_sync(system.aclose())
            record = read_json(out_dir / METRICS_FILE)
            print(f"already finished, kept as it is: {out_dir}")
        else:
            job = aexecute(prepared, system, options=options, journal=Journal(out_dir))
            record = write_run(out_dir, run_sync(job), to_dict(cfg))
    finally:
        folder.release()
    print(run_table(record))
    print(f"outputs: {out_dir}")
    return record


def validate(spec: TaskSpec, cfg: DictConfig, out_dir: Path) -> dict[str, Any]:
    """Run the task's validators on its data; the report's `errors` counts error findings."""
    view = spec.resolve_view(cfg.get("view"))
    root = data_root_for(spec, to_dict(cfg.roots))
    final = run_options(cfg).final
    dataset = load_dataset(spec, view, root, final=final)
    findings = run_validators(spec, dataset, load_context(spec, view, root, final=final))
    for finding in findings:
        print(f"{finding.severity}: {finding}")
    errors = sum(1 for f in findings if f.severity == "error")
    report = {
        "task": spec.name,
        "view": view,
        "records": len(dataset.samples),
        "errors": errors,
        "findings": [
            {"where": f.where, "message": f.message, "severity": f.severity} for f in findings
        ],
    }
    path = out_dir / VALIDATION_FILE
    atomic_write_json(path, report)
    print(
        f"{spec.name}: {len(dataset.samples)} records checked, {errors} errors, "
        f"{len(findings) - errors} warnings ({len(spec.validators)} validators)"
    )
    print(f"report: {path}")
    return report


def prompts(spec: TaskSpec, cfg: DictConfig, out_dir: Path) -> Path:
    """Write the rendered prompts (one row per sample) for a model run outside benchreg."""
    if spec.prompt is None:
        raise BenchregError(
            f"task {spec.name} has no prompt renderer", fix="mode=prompts needs a `prompt` entry"
        )
    view = spec.resolve_view(cfg.get("view"))
    root = data_root_for(spec, to_dict(cfg.roots))
    samples = load_dataset(spec, view, root, final=run_options(cfg).final).samples
    limit = run_options(cfg).limit
    samples = samples[:limit] if limit else samples
    rows = [
        {
            "id": sample.id,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "answer_schema": spec.answer_schema.name,
            "parser": spec.parser.name if spec.parser else None,
        }
        for sample, messages in zip(samples, render_prompts(spec, samples, view, root), strict=True)
    ]
    path = out_dir / PROMPTS_FILE
    atomic_write_jsonl(path, rows)
    view_arg = f" view={view}" if view else ""
    print(f"wrote {len(rows)} prompts to {path}")
    print(
        f"score a model's answers (in the {spec.family} predictions format) with: "
        f"python -m benchreg task={spec.name}{view_arg} model=predictions model.path=<file>"
    )
    return path
