"""Loader for a PromptCBLUE folder: `<split>.json` (JSON Lines) plus `<split>_structured.json`.

Each line of the split file: `input` (the full prompt), `target` (the gold text), `answer_choices`,
`task_type`, `task_dataset`, `sample_id`. Loader params: `task` (required: the PromptCBLUE task of
the entry) and `split`. One task entry takes the lines of its task (CMeIE-V2 is read as CMeIE);
lines of tasks outside the 16 (e.g. Text2DT, CMedCausal) are ignored. Every sample carries the
task as `input["task_dataset"]`.
Gold comes from the structured file (`{task: [{sample_id, answer}]}`) when it holds the sample,
otherwise from parsing `target` with the task's parser (`ctx.parser`, the entry's `parser:`). The
split is the run's view (dev | test | train) unless the loader param `split` names another file
stem.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Iterable
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, NamedTuple

from loguru import logger

from benchreg.core import checkcache, fastjson, idle, partload, registry
from benchreg.core.errors import BenchregError, ParseError, at
from benchreg.core.io import confined, data_cache
from benchreg.core.params import loader_params
from benchreg.core.reader import json_lines, read_json_strict
from benchreg.core.types import Dataset, LoadContext, Parser, Sample, samples_of_rows
from benchreg.families.cblue.catalogue import TASK_NAMES, TASKS, TaskInfo, lookup, task_of_params
from benchreg.families.cblue.parser import NoAnswer

TARGET_META = "_target"  # Sample.meta key of the line's target text
REQUIRED_FIELDS = ("input", "target", "task_dataset", "sample_id")


class Row(NamedTuple):  # a tuple: 80,000 of them are made far faster than a frozen dataclass
    line: int
    data: dict[str, Any]


@registry.loaders.register("cblue")
@loader_params(task=str, split=str | None)
def load_cblue(ctx: LoadContext) -> Dataset:
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
    files = [split_file, structured_file] if structured_file.is_file() else [split_file]
    key = {"task": info.name, "split": split, "parser": ctx.parser_ref}
    cached = checkcache.loaded(LOADED, files, key) if ctx.parser_ref else None
    if cached is not None:
        logger.info(
            f"{split_file.name}: {info.name} samples reused from an earlier run on these exact "
            f"files (cache {checkcache.cache_dir()})"
        )
        (kept,), rows = cached[:1], cached[1:]
        return Dataset(
            samples=samples_of_rows(rows),
            files=files[: kept["files"]],
            warnings=kept["warnings"],
            info={**kept["info"], "samples": "cached"},
        )
    dataset = _built(ctx, info, split, split_file, structured_file)
    if ctx.parser_ref:
        kept = {"files": len(dataset.files), "warnings": dataset.warnings, "info": dataset.info}
        rows = [(s.id, s.input, s.gold, s.meta) for s in dataset.samples]
        # equal strings are not looked for: the answer_choices lists are already shared
        checkcache.store_loaded(LOADED, files, [kept, *rows], key, strings_shared=True)
    return dataset


LOADED = "cblue.samples"  # the loaded-data cache's name of one task's samples


def _built(
    ctx: LoadContext, info: TaskInfo, split: str, split_file: Path, structured_file: Path
) -> Dataset:
    assert ctx.parser is not None
    files = {SPLIT_ROWS: split_file}
    if structured_file.is_file():
        files[STRUCTURED_GOLD] = structured_file
    parts = task_parts(info, files)
    rows = rows_of_task(split_file, info, parts[SPLIT_ROWS])
    gold_by_id = (
        structured_gold(structured_file, info, parts[STRUCTURED_GOLD])
        if structured_file.is_file()
        else {}
    )

    samples: list[Sample] = []
    warnings: list[str] = []
    seen: dict[str, int] = {}
    from_target: list[str] = []
    for row in rows:
        sample, used_target = _sample(row, info, split, split_file, gold_by_id, ctx.parser)
        if sample.id in seen:
            raise BenchregError(
                f"duplicate sample_id {sample.id!r} in task {info.name} "
                f"(first at line {seen[sample.id]})",
                where=at(split_file, row.line),
                fix="give every sample of a task its own sample_id",
            )
        seen[sample.id] = row.line
        if used_target:
            from_target.append(sample.id)
        samples.append(sample)

    files = [split_file]
    if gold_by_id:
        files.append(structured_file)
        if from_target:
            warnings.append(
                f"{structured_file.name} has no gold for {len(from_target)} {info.name} "
                f"sample(s) ({_some(from_target)}); their gold was parsed from `target`"
            )
        stray = sorted(set(gold_by_id) - set(seen))
        if stray:
            warnings.append(
                f"{structured_file.name}: {len(stray)} {info.name} gold entr(y/ies) for samples "
                f"not in {split_file.name}, e.g. {stray[0]!r}; ignored"
            )
    if (
        samples
        and all(not str(s.meta.get(TARGET_META, "")).strip() for s in samples)
        and not gold_by_id
    ):
        warnings.append(
            f"every {info.name} target in {split_file.name} is empty: this split has no gold, "
            "so its scores mean nothing (use it to write results.json for submission)"
        )
    return Dataset(
        samples=samples,
        files=files,
        warnings=warnings,
        info={
            "split": split,
            "task_dataset": info.name,
            "gold_from_structured": len(samples) - len(from_target),
            "gold_from_target": len(from_target),
        },
    )


def _some(ids: list[str], shown: int = 5) -> str:
    return ", ".join(ids[:shown]) + (", ..." if len(ids) > shown else "")


def _sample(
    row: Row,
    info: TaskInfo,
    split: str,
    split_file: Path,
    gold_by_id: dict[str, Any],
    parser: Parser,
) -> tuple[Sample, bool]:
    data = row.data
    sample_id = data["sample_id"]
    choices = data.get("answer_choices")
    inputs = {
        "prompt": data["input"],
        "answer_choices": list(choices) if isinstance(choices, list) else None,
        "task_type": data.get("task_type"),
        "task_dataset": info.name,
    }
    # the target text: for the data checks only (samples.jsonl leaves `_` keys out: the split
    # file holds it)
    meta = {"split": split, "line": row.line, TARGET_META: data["target"]}
    if sample_id in gold_by_id:
        return Sample(id=sample_id, input=inputs, gold=gold_by_id[sample_id], meta=meta), False
    sample = Sample(id=sample_id, input=inputs, gold=None, meta=meta)
    try:
        gold = parser(data["target"], sample)
    except NoAnswer as exc:  # a target without an answer (a test split's empty one): official
        gold = exc.official
    except ParseError as exc:
        raise BenchregError(
            f"cannot read the gold of {sample_id} from its target: {exc}",
            where=at(split_file, row.line),
            fix="give the line its answer_choices, or add the sample to the structured gold file",
        ) from None
    return _with_gold(sample, gold), True


def _with_gold(sample: Sample, gold: Any) -> Sample:
    return Sample(id=sample.id, input=sample.input, gold=gold, meta=sample.meta)


def rows_of_task(split_file: Path, info: TaskInfo, kept: list[Any] | None = None) -> list[Row]:
    """The task's rows of a split file (``kept``: its part of the file, see :func:`task_parts`)."""
    if kept is not None:
        return [Row(*row) for row in kept]
    return list(_rows_by_task(*_identity(split_file)).get(info.name, ()))


SPLIT_ROWS = "cblue.split_rows"  # the loaded-data cache's name of one task's rows of a split
STRUCTURED_GOLD = "cblue.structured_gold"  # ... and of one task's part of a structured gold file


def task_parts(info: TaskInfo, files: dict[str, Path]) -> dict[str, list[Any] | None]:
    """This task's part of each file (by kind: :data:`SPLIT_ROWS`, :data:`STRUCTURED_GOLD`),
    or None where this process reads the whole file itself.

    Both files hold every task (a sweep loads them for 16 tasks). The first time, they are
    decoded by forked copies of this process, all at once (the split in halves, a copy each, and
    the gold by a third), which keep each task's part in the loaded-data cache, while this
    process does the work offered for the wait (core.idle). It then reads its task's parts alone
    and stays small (a sweep forks its later jobs only while it is, see
    `hydra_plugins.benchreg_sweeper.forked`). Where that cannot be done (a small file, the
    cache off, another thread running, a copy that failed, a problem in the file, which this
    process then reports), the whole file is read here, once per process."""
    parts = {kind: _kept_part(kind, path, info) for kind, path in files.items()}
    missing = {
        kind: path for kind, path in files.items() if parts[kind] is None and _copy_worth(path)
    }
    if missing:
        _keep_in_copies(missing)
        parts.update({kind: _kept_part(kind, path, info) for kind, path in missing.items()})
    return parts


FileIdentity = tuple[str, int, int]  # resolved path, mtime_ns, size
_TRIED: set[tuple[str, FileIdentity]] = set()  # a copy kept these already, or failed to


def _identity(path: Path) -> FileIdentity:
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


SPLIT_COPIES = 2  # a split file is decoded in halves, by a copy each (beside the gold's)


def _kept_part(kind: str, path: Path, info: TaskInfo) -> list[Any] | None:
    if kind != SPLIT_ROWS:
        return checkcache.loaded(kind, [path], {"task": info.name})
    rows: list[Any] = []
    for half in range(SPLIT_COPIES):
        kept = checkcache.loaded(kind, [path], {"task": info.name, "half": half})
        if kept is None:
            return None
        rows += kept
    return rows


def _copy_worth(path: Path) -> bool:
    return (
        checkcache.enabled()
        and path.stat().st_size >= checkcache.LOADED_MIN_BYTES
        and partload.forking()
    )


def _keep_in_copies(files: dict[str, Path]) -> None:
    """Every task's part of each file into the loaded-data cache, a forked copy per file."""
    with tempfile.TemporaryDirectory(prefix="benchreg-cblue-") as tmp:
        copies = []
        for kind, path in files.items():
            identity = _identity(path)
            if (kind, identity) in _TRIED:
                continue
            _TRIED.add((kind, identity))
            if kind == SPLIT_ROWS:  # in halves: cut at the first line start after the middle
                cut = fastjson.line_start_after(path, identity[2] // 2)
                works = [
                    partial(_keep_split_half, identity, half, start, end)
                    for half, (start, end) in enumerate([(0, cut), (cut, identity[2])])
                ]
            else:
                works = [partial(_keep_gold_parts, identity)]
            for k, work in enumerate(works):
                log = Path(tmp) / f"{kind}.{k}.log"
                copies.append((path, log, partload.fork_copy(work, log)))
        if copies:
            idle.run_offered()  # on the core the copies leave (two files, two copies)
        for path, log, copy in copies:
            if code := copy.wait():
                last = log.read_text("utf-8", "replace").strip().splitlines()[-1:]
                logger.debug(f"{path.name}: its copy exited with {code} ({' '.join(last)})")


def _keep_gold_parts(identity: FileIdentity) -> tuple[int, Any]:
    """In a forked copy: every task's part of a structured gold file into the loaded-data
    cache; exit code 3 for a problem in the file (the loading process reads it and reports
    it)."""
    try:
        data = _read_structured(*identity)
    except BenchregError:
        return 3, None
    _store_parts(
        STRUCTURED_GOLD,
        identity,
        {},
        lambda task: [{key: data[key] for key in TASKS[task].names if key in data}],
    )
    return 0, data


def _keep_split_half(identity: FileIdentity, half: int, start: int, end: int) -> tuple[int, Any]:
    """In a forked copy: every task's rows among the split file's lines in bytes ``[start,
    end)`` into the loaded-data cache; exit code 3 for a problem, or anything the fast reader
    leaves to the core reader (the loading process then reads the whole file)."""
    path = identity[0]
    lines = fastjson.json_lines_between(Path(path), start, end)
    if lines is None:
        return 3, None
    try:
        by_task = _grouped(_checked_rows(lines, path))
    except BenchregError:
        return 3, None
    _store_parts(
        SPLIT_ROWS,
        identity,
        {"half": half},
        lambda task: [tuple(row) for row in by_task.get(task, ())],
    )
    return 0, by_task


def _store_parts(
    kind: str, identity: FileIdentity, params: dict[str, Any], part_of: Callable[[str], list[Any]]
) -> None:
    """Each task's part of a file (``part_of(task)``) into the loaded-data cache, under ``kind``,
    the task and ``params`` (what :func:`_kept_part` reads back)."""
    files = [Path(identity[0])]
    for task in TASK_NAMES:
        part = part_of(task)
        checkcache.store_loaded(kind, files, part, {"task": task, **params}, strings_shared=True)


@data_cache
@lru_cache(maxsize=4)
def _rows_by_task(path: str, mtime_ns: int, size: int) -> dict[str, tuple[Row, ...]]:
    """The rows of a split file grouped by task, once per file (not once per task entry)."""
    return _grouped(_read_split(path, mtime_ns, size))


@data_cache
@lru_cache(maxsize=4)
def _read_split(path: str, mtime_ns: int, size: int) -> tuple[Row, ...]:
    """Every row of a split file (JSON Lines, whatever its suffix), checked once (a sweep loads
    the same file for 16 tasks)."""
    return _checked_rows(((line, obj) for line, obj, _ in json_lines(Path(path))), path)


def _grouped(rows: Iterable[Row]) -> dict[str, tuple[Row, ...]]:
    groups: dict[str, list[Row]] = {}
    for row in rows:
        info = lookup(row.data["task_dataset"])
        if info is not None:
            groups.setdefault(info.name, []).append(row)
    return {name: tuple(rows) for name, rows in groups.items()}


def _checked_rows(lines: Iterable[tuple[int, Any]], path: str) -> tuple[Row, ...]:
    """The rows of a split file's decoded lines ``(line number, value)``, each checked."""
    rows = []
    # A task's rows repeat the same answer_choices (CHIP-CTC: 44 labels on every line): rows
    # share one list of each (40% of the rows' memory otherwise). Rows are never mutated.
    shared_choices: dict[tuple[str, ...], list[str]] = {}
    required = frozenset(REQUIRED_FIELDS)
    intern = sys.intern
    for line, obj in lines:
        if not (  # the common case at once; _row_problem names what is wrong
            type(obj) is dict
            and obj.keys() >= required
            and type(obj["input"]) is str
            and type(obj["target"]) is str
            and type(obj["task_dataset"]) is str
            and type(obj["sample_id"]) is str
        ):
            _row_problem(obj, at(path, line))
        choices = obj.get("answer_choices")
        if choices is not None:
            try:  # equal to a list seen before: a list of the same strings
                shared = shared_choices.get(tuple(choices)) if type(choices) is list else None
            except TypeError:  # an unhashable element
                shared = None
            if shared is None:
                if not (isinstance(choices, list) and all(isinstance(c, str) for c in choices)):
                    raise BenchregError(
                        "answer_choices must be a list of strings or null", where=at(path, line)
                    )
                shared = shared_choices.setdefault(tuple(choices), choices)
            obj["answer_choices"] = shared
        obj["task_dataset"] = intern(obj["task_dataset"])
        if type(task_type := obj.get("task_type")) is str:
            obj["task_type"] = intern(task_type)
        rows.append(Row(line, obj))
    return tuple(rows)


def _row_problem(obj: Any, where: str) -> None:
    """Raise the first problem of a split file's line, if it has one."""
    if not isinstance(obj, dict):
        raise BenchregError("a PromptCBLUE line must be a JSON object", where=where)
    missing = [f for f in REQUIRED_FIELDS if f not in obj]
    if missing:
        raise BenchregError(
            f"line lacks field(s) {', '.join(missing)}",
            where=where,
            fix="each line needs input, target, answer_choices, task_type, task_dataset, sample_id",
        )
    for name in ("input", "target", "task_dataset", "sample_id"):
        if not isinstance(obj[name], str):
            raise BenchregError(f"field {name!r} must be a string", where=where)


def structured_gold(
    path: Path, info: TaskInfo, kept: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """`{sample_id: answer}` of one task from a results.json-shaped gold file (``kept``: the
    task's part of it, see :func:`task_parts`)."""
    data = kept[0] if kept else _read_structured(*_identity(path))
    present = [name for name in info.names if name in data]
    if not present:
        return {}
    if len(present) > 1:
        raise BenchregError(
            f"gold file names task {info.name} twice ({' and '.join(present)})",
            where=path,
            fix="keep one of the two keys",
        )
    entries = data[present[0]]
    if not isinstance(entries, list):
        raise BenchregError(f"gold of task {present[0]} must be a list", where=path)
    gold: dict[str, Any] = {}
    for index, entry in enumerate(entries):
        if not (isinstance(entry, dict) and isinstance(entry.get("sample_id"), str)):
            raise BenchregError(
                f"gold entry {index} of task {present[0]} lacks a string sample_id", where=path
            )
        if "answer" not in entry:
            raise BenchregError(
                f"gold entry {entry['sample_id']} of task {present[0]} has no answer", where=path
            )
        problem = _gold_problem(info, entry["answer"])
        if problem:
            raise BenchregError(
                f"gold of {entry['sample_id']} ({present[0]}): {problem}",
                where=path,
                fix="fix the gold file; it must be in the results.json shape",
            )
        gold[entry["sample_id"]] = entry["answer"]
    return gold


def _gold_problem(info: TaskInfo, answer: Any) -> str | None:
    if info.kind == "extraction":
        if not isinstance(answer, list) or not all(isinstance(i, dict) for i in answer):
            return "must be a list of objects"
    elif info.kind in ("classification", "reply"):
        if not isinstance(answer, str):
            return "must be a string"
    elif not (isinstance(answer, dict) and all(isinstance(v, str) for v in answer.values())):
        return "must be an object of string sections"
    return None


@data_cache
@lru_cache(maxsize=4)
def _read_structured(path: str, mtime_ns: int, size: int) -> dict[str, Any]:
    data = read_json_strict(Path(path))
    if not isinstance(data, dict):
        raise BenchregError("a structured gold file must map task names to lists", where=path)
    return data
