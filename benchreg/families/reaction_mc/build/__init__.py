"""Builder: a condition -> outcome table (CSV + YAML config) -> a V6 output directory.

The command (`__main__.py`):

    python -m benchreg.families.reaction_mc.build --config <yaml> --out <dir> --seed N

Steps: `config.py` (the YAML config), `table.py` (CSV -> source tables, step 1), `questions.py`
(the 6 question types, step 2). `build` runs them; `write_release` writes
`multiple_choice_<type>.json` for the 6 question types, `prompt_<type>.txt` (the shipped
templates), `example_prediction_multiple_choice_<type>.json` (every id -> 0) and
`build_report.json` / `report.md` (counts, skip reasons, settings).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchreg.core.io import atomic_write_json, atomic_write_text, sha256_file
from benchreg.families.reaction_mc.build.config import BuildConfig, load_config
from benchreg.families.reaction_mc.build.questions import BuildStats, Question, build_questions
from benchreg.families.reaction_mc.build.table import TableRead, read_tables
from benchreg.families.reaction_mc.loader import data_file_name, dump_questions
from benchreg.families.reaction_mc.records import QUESTION_TYPES

PROMPTS_DIR = Path(__file__).resolve().parents[1] / "prompts"


def prompt_file(question_type: str) -> str:
    """The template of a type; `*_reference_control` use their family's non-reference one."""
    return f"prompt_{question_type.removesuffix('_reference_control')}.txt"


def build(config_path: Path, seed: int) -> tuple[dict[str, list[Question]], dict[str, Any]]:
    """Questions per type and the build report (nothing written)."""
    config, table_path = load_config(config_path)
    read = read_tables(config, table_path)
    questions, stats = build_questions(config, read.tables, seed)
    return questions, _report(config, config_path, table_path, seed, read, stats)


def _report(
    config: BuildConfig,
    config_path: Path,
    table_path: Path,
    seed: int,
    read: TableRead,
    stats: BuildStats,
) -> dict[str, Any]:
    return {
        "config": str(config_path),
        "table": str(table_path),
        "table_sha256": sha256_file(table_path),
        "seed": seed,
        "settings": config.questions.model_dump(),
        "rows_skipped": dict(read.skipped),
        "rows_skipped_examples": read.examples,
        **stats.as_json(),
    }


def write_release(
    out_dir: Path,
    questions: dict[str, list[Question]],
    report: dict[str, Any],
    *,
    with_prompts: bool = True,
) -> list[Path]:
    written = []
    for qtype in QUESTION_TYPES:
        path = out_dir / data_file_name(qtype)
        atomic_write_text(path, dump_questions(questions.get(qtype, [])))
        written.append(path)
        if with_prompts:
            example = out_dir / f"example_prediction_multiple_choice_{qtype}.json"
            atomic_write_json(example, {q["id"]: 0 for q in questions.get(qtype, [])})
            written.append(example)
    if with_prompts:
        for qtype in QUESTION_TYPES:
            if qtype.endswith("_control"):
                continue
            name = prompt_file(qtype)
            atomic_write_text(out_dir / name, (PROMPTS_DIR / name).read_text(encoding="utf-8"))
            written.append(out_dir / name)
    atomic_write_json(out_dir / "build_report.json", report)
    atomic_write_text(out_dir / "report.md", _markdown(report))
    return written


def _markdown(report: dict[str, Any]) -> str:
    rows = "\n".join(
        f"| `{data_file_name(t)}` | `{t}` | {n} |" for t, n in report["questions"].items()
    )
    return (
        "# Multiple-choice build report (benchreg reaction_mc builder)\n\n"
        f"- table: `{report['table']}` (sha256 `{report['table_sha256']}`)\n"
        f"- config: `{report['config']}`; seed: `{report['seed']}`\n"
        f"- source tables: {report['tables']} (used: {report['tables_used']})\n"
        f"- questions: {report['questions_total']}\n"
        f"- reference attempts: {report['reference_attempts']}, generated: "
        f"{report['reference_generated']}, skipped: {report['reference_skipped']}\n"
        f"- skipped questions: {report['skipped_questions']}\n"
        f"- skipped rows: {report['rows_skipped']}\n\n"
        "| file | question_type | questions |\n|---|---|---:|\n"
        f"{rows}\n"
    )
