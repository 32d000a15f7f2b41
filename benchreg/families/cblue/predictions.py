"""Reader for PromptCBLUE predictions (`model=predictions model.path=<file>`), two formats:

- structured: a results.json (`{task: [{sample_id, answer}]}`, all tasks in one file; each job
  takes its own task; CMeIE-V2 is read as CMeIE). Answers are checked by the task's schema.
- text: JSON Lines (or a JSON list of rows), either rows like dev.json with the model's output in
  `target`, or `{sample_id, output}` rows (optionally with `task_dataset`); the task's parser reads
  the text. A `{sample_id, answer}` row (no text) carries a structured answer, as in results.json.
  Rows naming another task are skipped; rows without a task name are taken as this task's.

The task is the one the loader put on the samples (`input["task_dataset"]`). Entries go through
the shared :class:`PredictionCollector` (duplicates: `conflicts_invalid`). Nothing in a prediction
file aborts the run except a file that is not JSON at all: a missing task, missing samples,
unknown sample ids, malformed entries or lines and conflicting duplicates are reported (notes,
unknown_ids) with the exact ids, and the samples concerned are `missing` or `invalid`, scored
as wrong (never as the empty answer, which can earn credit).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.load import LoadPlan, load
from benchreg.core.predictions import PredictionCollector
from benchreg.core.reader import DuplicateKeyError, Record, decode, loads, read_records
from benchreg.core.types import Prediction, PredictionSet, Sample, Status
from benchreg.families.cblue.catalogue import TaskInfo, lookup, task_of_sample

_NO_ANSWER = object()  # what an entry without a usable answer "said" (to compare duplicates)


@registry.prediction_readers.register("cblue")
def read_predictions(
    path: Path, samples: Sequence[Sample], task_name: str, **params: Any
) -> PredictionSet:
    kind, content = _load(path)
    first_of_task: dict[str, Sample] = {}
    for sample in samples:
        first_of_task.setdefault(str(sample.input.get("task_dataset")), sample)
    tasks = {task_of_sample(s) for s in first_of_task.values()}
    if len(tasks) > 1:
        raise ValueError(f"samples of several PromptCBLUE tasks: {sorted(t.name for t in tasks)}")
    info = next(iter(tasks), None)
    collector = PredictionCollector(
        path, samples, task=info.name if info else task_name, duplicates="conflicts_invalid"
    )
    if info is not None and kind == "results":
        _collect_results(content, info, samples, collector)
    elif info is not None:
        _collect_rows(content, info, collector)
    return collector.finish()


# --- structured results.json ------------------------------------------------------------------


def _collect_results(
    data: dict[str, Any], info: TaskInfo, samples: Sequence[Sample], out: PredictionCollector
) -> None:
    keys = [name for name in info.names if name in data]
    if len(keys) > 1:
        raise BenchregError(
            f"results file names task {info.name} twice ({' and '.join(keys)})",
            where=out.path,
            fix="keep one of the two keys",
        )
    if not keys:
        out.note(
            f"task {info.name} is not in {out.path.name}: all {len(samples)} samples are missing"
        )
        return
    key = keys[0]
    entries = data[key]
    if not isinstance(entries, list):
        out.note(f"task {key} in {out.path.name} is not a list; every sample is invalid")
        for sample in samples:
            pred = Prediction(sample.id, status=Status.INVALID, detail=f"task {key} is not a list")
            out.add(sample.id, pred, where=key, value=_NO_ANSWER)
        return
    for index, entry in enumerate(entries):
        where = f"{key}[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("sample_id"), str):
            out.add_malformed(where)
            continue
        sample_id = entry["sample_id"]
        if "answer" not in entry:
            pred = Prediction(sample_id, status=Status.INVALID, detail="entry has no answer")
            out.add(sample_id, pred, where=where, value=_NO_ANSWER)
            continue
        out.add(sample_id, Prediction(sample_id, answer=entry["answer"]), where=where)


# --- text rows ---------------------------------------------------------------------------------


def _collect_rows(records: Sequence[Record], info: TaskInfo, out: PredictionCollector) -> None:
    for record in records:
        row, where = record.data, record.where
        if not isinstance(row, dict) or not isinstance(row.get("sample_id"), str):
            out.add_malformed(where)  # includes lines that are not JSON (record.error)
            continue
        task = row.get("task_dataset", row.get("task"))
        if task is not None and lookup(str(task)) is not info:
            continue  # another task's row
        sample_id = row["sample_id"]
        if "output" not in row and "target" not in row and "answer" in row:
            out.add(sample_id, Prediction(sample_id, answer=row["answer"]), where=where)
            continue
        text = row["output"] if "output" in row else row.get("target")
        if not isinstance(text, str):
            detail = "row has no output text" if text is None else "output is not a string"
            pred = Prediction(sample_id, status=Status.INVALID, detail=detail)
            out.add(sample_id, pred, where=where, value=_NO_ANSWER)
            continue
        out.add(sample_id, Prediction(sample_id, raw_text=text), where=where, value=text)


# --- file reading -------------------------------------------------------------------------------

PREDICTIONS = "cblue.predictions"  # the loading door's name of a decoded predictions file
FORMAT = 1  # the shape of the door's value: part of its key


def _load(path: Path) -> tuple[str, Any]:
    """('results', dict) for a results.json, else ('rows', [Record, ...]). A sweep's 16 jobs
    read one file: its decoded content is a value of the loading door, kept for the next job."""
    if not path.is_file():
        raise BenchregError("predictions file not found", where=path)
    plan = LoadPlan(PREDICTIONS, (path,), partial(_read, path), {"format": FORMAT}, disk=False)
    kind, content = load(plan).value
    if kind == "rows":
        content = [Record(*record) for record in content]
    return kind, content


def _read(path: Path) -> tuple[str, Any]:
    """('results', dict) for a results.json, else ('rows', [(where, data, error), ...]) (a
    JSON list of rows, or JSON Lines whatever the suffix, read leniently: an undecodable line
    is malformed)."""
    whole = _results_from_bytes(path)
    if whole is not None:
        return "results", whole
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BenchregError(
            f"predictions file is not UTF-8 text ({exc.reason} at byte {exc.start})",
            where=path,
            fix="write results.json or the JSON Lines file as UTF-8",
        ) from None
    stripped = text.lstrip()
    if not stripped:
        raise BenchregError("predictions file is empty", where=path)
    records = None
    if stripped[0] in "{[":
        whole = _whole_document(path, text)
        if isinstance(whole, dict) and _looks_like_results(whole):
            return "results", whole
        if isinstance(whole, list):
            records = read_records(path, lines=False)
    if records is None:
        records = _lines(path)
    return "rows", [(r.where, r.data, r.error) for r in records]


def _results_from_bytes(path: Path) -> dict[str, Any] | None:
    """A results.json decoded from its bytes (no text copy of a large file), or None for
    anything else (then read as text, every problem named)."""
    data = path.read_bytes()
    if data[:1] != b"{":
        return None
    try:
        value = decode(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) and _looks_like_results(value) else None


def _lines(path: Path) -> list[Record]:
    records = read_records(path, lenient=True, lines=True)
    if not any(r.error is None for r in records):
        first = records[0]
        raise BenchregError(
            f"{first.error} (no line of the file is JSON)",
            where=first.where,
            fix="write results.json, or one JSON object per line",
        )
    return records


def _whole_document(path: Path, text: str) -> Any:
    """The file as one JSON value, or None when it is not one (JSON Lines, malformed)."""
    try:
        return loads(text)
    except json.JSONDecodeError:
        return None
    except DuplicateKeyError as exc:
        try:
            json.loads(text)
        except json.JSONDecodeError:
            return None  # JSON Lines: that line is reported as malformed when read line by line
        raise BenchregError(str(exc), where=path, fix="give every key once") from None


def _looks_like_results(data: dict[str, Any]) -> bool:
    if data and all(isinstance(v, list) for v in data.values()):
        return True
    return any(lookup(key) is not None for key in data) and "sample_id" not in data
