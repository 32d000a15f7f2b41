"""Loader for a PromptCBLUE folder: `<split>.json` (JSON Lines) plus `<split>_structured.json`.

Each line of the split file: `input` (the full prompt), `target` (the gold text), `answer_choices`,
`task_type`, `task_dataset`, `sample_id` (the rules: records.py). Loader params: `task` (required:
the PromptCBLUE task of the entry) and `split`. One task entry takes the lines of its task
(CMeIE-V2 is read as CMeIE); lines of tasks outside the 16 (e.g. Text2DT, CMedCausal) are
ignored. Every sample carries the task as `input["task_dataset"]`.
Gold comes from the structured file (`{task: [{sample_id, answer}]}`) when it holds the sample,
otherwise from parsing `target` with the task's parser (`ctx.parser`, the entry's `parser:`). The
split is the run's view (dev | test | train) unless the loader param `split` names another file
stem.

A task's samples are one value of the loading door (:mod:`benchreg.core.load`), built from the
split file's rows and the gold file's document, two values of their own that the door keeps for
the next task of a sweep.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError, ParseError, at
from benchreg.core.io import confined
from benchreg.core.load import LoadPlan, load
from benchreg.core.params import loader_params
from benchreg.core.types import Dataset, LoadContext, Parser, Sample
from benchreg.families.cblue.catalogue import TaskInfo, task_of_params
from benchreg.families.cblue.gold import task_gold
from benchreg.families.cblue.parser import NoAnswer
from benchreg.families.cblue.split import ROWS_FORMAT, Row, task_rows

TARGET_META = "_target"  # Sample.meta key of the line's target text
SAMPLES = "cblue.samples"  # the loading door's name of one task's samples
SAMPLES_FORMAT = 1  # the shape of the samples value: part of its key


@registry.loaders.register("cblue")
@loader_params(task=str, split=str | None)
def load_cblue(ctx: LoadContext) -> Dataset:
    info, split, split_file, structured_file = _files(ctx)
    files = (split_file, structured_file) if structured_file.is_file() else (split_file,)
    key = {"task": info.name, "split": split, "parser": ctx.parser_ref}
    key |= {"rows": ROWS_FORMAT, "samples": SAMPLES_FORMAT}
    read = partial(_samples, ctx, info, split, split_file, structured_file)
    # gold parsed by a parser the context does not name cannot be kept under its name
    loaded = load(LoadPlan(SAMPLES, files, read, key), cache=ctx.cache and bool(ctx.parser_ref))
    value = loaded.value
    return Dataset(
        samples=[Sample(*row) for row in value["rows"]],
        files=list(files[: value["files"]]),
        warnings=list(value["warnings"]),
        info={**value["info"], "loaded": loaded.source},
    )


def _files(ctx: LoadContext) -> tuple[TaskInfo, str, Path, Path]:
    """The entry's task, its split and the split's two files (the gold file may be absent)."""
    unknown = sorted(set(ctx.params) - {"task", "split"})
    if unknown:
        raise BenchregError(
            f"loader cblue: unknown params {unknown}",
            where=f"task entry {ctx.task_name}",
            fix="it takes: task, split",
        )
    info = task_of_params(ctx.params, where=f"task entry {ctx.task_name}")
    if ctx.parser is None:
        raise BenchregError(
            f"task entry {ctx.task_name} names no parser",
            fix="add `parser: <the task's parser>` (it reads gold given as `target` text)",
        )
    split = str(ctx.params.get("split") or ctx.view or "dev")
    split_file = confined(ctx.data_root / f"{split}.json", ctx.data_root, what="split")
    if not split_file.is_file():
        raise BenchregError(
            f"PromptCBLUE split file {split_file.name} not found",
            where=ctx.data_root,
            fix=f"point roots.cblue at a folder with {split}.json (JSON Lines) or pick a view",
        )
    structured_file = confined(ctx.data_root / f"{split}_structured.json", ctx.data_root)
    return info, split, split_file, structured_file


@dataclass
class _Built:
    """One task's samples as plain rows ``(id, input, gold, meta)``, and where their gold came
    from."""

    rows: list[tuple[str, dict[str, Any], Any, dict[str, Any]]] = field(default_factory=list)
    first_line: dict[str, int] = field(default_factory=dict)  # sample_id -> its line
    from_target: list[str] = field(default_factory=list)  # ids whose gold was parsed


def _samples(
    ctx: LoadContext, info: TaskInfo, split: str, split_file: Path, structured_file: Path
) -> dict[str, Any]:
    """The door's value of one task's samples: their rows, the files their gold came from (how
    many of split, gold), the data set's warnings and info."""
    assert ctx.parser is not None
    rows = task_rows(split_file, info, cache=ctx.cache)
    has_gold_file = structured_file.is_file()
    gold_by_id = task_gold(structured_file, info, cache=ctx.cache) if has_gold_file else {}
    built = _Built()
    for row in rows:
        _add_sample(built, row, info, split, split_file, gold_by_id, ctx.parser)
    warnings = _warnings(built, info, split_file, structured_file, gold_by_id)
    return {
        "rows": built.rows,
        "files": 2 if gold_by_id else 1,
        "warnings": warnings,
        "info": {
            "split": split,
            "task_dataset": info.name,
            "gold_from_structured": len(built.rows) - len(built.from_target),
            "gold_from_target": len(built.from_target),
        },
    }


def _add_sample(
    built: _Built,
    row: Row,
    info: TaskInfo,
    split: str,
    split_file: Path,
    gold_by_id: dict[str, Any],
    parser: Parser,
) -> None:
    line, sample_id, prompt, target, choices, task_type = row
    if sample_id in built.first_line:
        raise BenchregError(
            f"duplicate sample_id {sample_id!r} in task {info.name} "
            f"(first at line {built.first_line[sample_id]})",
            where=at(split_file, line),
            fix="give every sample of a task its own sample_id",
        )
    built.first_line[sample_id] = line
    inputs = {
        "prompt": prompt,
        "answer_choices": choices,  # shared by the rows of equal choices: never changed
        "task_type": task_type,
        "task_dataset": info.name,
    }
    # the target text: for the data checks only (samples.jsonl leaves `_` keys out: the split
    # file holds it)
    meta = {"split": split, "line": line, TARGET_META: target}
    if sample_id in gold_by_id:
        gold = gold_by_id[sample_id]
    else:
        gold = _parsed_gold(Sample(sample_id, inputs, None, meta), parser, split_file, line)
        built.from_target.append(sample_id)
    built.rows.append((sample_id, inputs, gold, meta))


def _parsed_gold(sample: Sample, parser: Parser, split_file: Path, line: int) -> Any:
    """The gold of ``sample`` read from its target text by the task's parser."""
    try:
        return parser(sample.meta[TARGET_META], sample)
    except NoAnswer as exc:  # a target without an answer (a test split's empty one): official
        return exc.official
    except ParseError as exc:
        raise BenchregError(
            f"cannot read the gold of {sample.id} from its target: {exc}",
            where=at(split_file, line),
            fix="give the line its answer_choices, or add the sample to the structured gold file",
        ) from None


def _warnings(
    built: _Built,
    info: TaskInfo,
    split_file: Path,
    structured_file: Path,
    gold_by_id: dict[str, Any],
) -> list[str]:
    warnings: list[str] = []
    if gold_by_id and built.from_target:
        warnings.append(
            f"{structured_file.name} has no gold for {len(built.from_target)} {info.name} "
            f"sample(s) ({_some(built.from_target)}); their gold was parsed from `target`"
        )
    stray = sorted(set(gold_by_id) - set(built.first_line))
    if stray:
        warnings.append(
            f"{structured_file.name}: {len(stray)} {info.name} gold entr(y/ies) for samples "
            f"not in {split_file.name}, e.g. {stray[0]!r}; ignored"
        )
    targets = (meta[TARGET_META] for *_, meta in built.rows)
    if built.rows and not gold_by_id and not any(target.strip() for target in targets):
        warnings.append(
            f"every {info.name} target in {split_file.name} is empty: this split has no gold, "
            "so its scores mean nothing (use it to write results.json for submission)"
        )
    return warnings


def _some(ids: list[str], shown: int = 5) -> str:
    return ", ".join(ids[:shown]) + (", ..." if len(ids) > shown else "")
