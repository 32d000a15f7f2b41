"""Reader for PromptCBLUE predictions (`model=predictions model.path=<file>`), two formats:

- structured: a results.json (`{task: [{sample_id, answer}]}`, all tasks in one file; each job
  takes its own task; CMeIE-V2 is read as CMeIE). Answers are checked by the task's schema.
- text: JSON Lines, either rows like dev.json with the model's output in `target`, or
  `{sample_id, output}` rows (optionally with `task_dataset`); the task's parser reads the text.
  A `{sample_id, answer}` row (no text) carries a structured answer, as in results.json.
  Rows naming another task are skipped; rows without a task name are taken as this task's.

Nothing in a prediction file aborts the run except a file that is not JSON at all: a missing task,
missing samples, unknown sample ids, malformed entries and conflicting duplicates are reported
(PredictionSet.notes / unknown_ids) with the exact ids, and the samples concerned are scored as
empty answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from loguru import logger

from benchreg.core import registry
from benchreg.core.errors import BenchregError, at
from benchreg.core.io import iter_jsonl
from benchreg.core.types import Prediction, PredictionSet, Sample, Status
from benchreg.families.cblue.catalogue import TaskInfo, lookup, task_of_entry

MAX_IDS_IN_NOTE = 50


@registry.prediction_readers.register("cblue")
def read_predictions(
    path: Path, samples: Sequence[Sample], task_name: str, **params: Any
) -> PredictionSet:
    info = task_of_entry(task_name, params)
    kind, content = _load(path)
    collector = _Collector(path, info, {s.id for s in samples})
    if kind == "results":
        _collect_results(content, collector)
    else:
        _collect_rows(content, collector)
    return collector.finish(samples)


@dataclass
class _Collector:
    path: Path
    info: TaskInfo
    known: set[str]
    by_id: dict[str, Prediction] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)  # what each kept prediction said
    unknown: dict[str, None] = field(default_factory=dict)  # ordered set of unknown ids
    malformed: list[str] = field(default_factory=list)  # where: entry index or file:line
    conflicts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    task_absent: bool = False

    def add(self, sample_id: str, pred: Prediction, value: Any) -> None:
        if sample_id not in self.known:
            self.unknown[sample_id] = None
            return
        if sample_id not in self.by_id:
            self.by_id[sample_id] = pred
            self.values[sample_id] = value
            return
        if sample_id in self.conflicts or self.values[sample_id] == value:
            return  # an identical repeat is harmless
        self.conflicts.append(sample_id)
        self.by_id[sample_id] = Prediction(
            sample_id, status=Status.INVALID, detail="conflicting duplicate entries"
        )

    def finish(self, samples: Sequence[Sample]) -> PredictionSet:
        name = self.info.name
        if self.task_absent:
            self.notes.append(
                f"task {name} is not in {self.path.name}: all {len(samples)} samples are missing"
            )
        else:
            missing = [s.id for s in samples if s.id not in self.by_id]
            if missing:
                self.notes.append(
                    f"{name}: {len(missing)} sample(s) have no prediction: {_ids(missing)}"
                )
        if self.unknown:
            self.notes.append(
                f"{name}: {len(self.unknown)} prediction(s) for unknown sample ids, ignored: "
                f"{_ids(list(self.unknown))}"
            )
        if self.malformed:
            self.notes.append(
                f"{name}: {len(self.malformed)} malformed entr(y/ies) without a usable sample_id, "
                f"ignored: {_ids(self.malformed)}"
            )
        if self.conflicts:
            self.notes.append(
                f"{name}: conflicting duplicate predictions, scored as invalid: "
                f"{_ids(self.conflicts)}"
            )
        for note in self.notes:
            logger.warning(f"{self.path.name}: {note}")
        return PredictionSet(
            by_id=self.by_id, files=[self.path], unknown_ids=list(self.unknown), notes=self.notes
        )


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:MAX_IDS_IN_NOTE])
    rest = len(ids) - MAX_IDS_IN_NOTE
    return f"{shown}, ... ({rest} more; see samples.jsonl)" if rest > 0 else shown


# --- structured results.json ------------------------------------------------------------------


def _collect_results(data: dict[str, Any], out: _Collector) -> None:
    keys = [name for name in out.info.names if name in data]
    if len(keys) > 1:
        raise BenchregError(
            f"results file names task {out.info.name} twice ({' and '.join(keys)})",
            where=out.path,
            fix="keep one of the two keys",
        )
    if not keys:
        out.task_absent = True
        return
    key = keys[0]
    entries = data[key]
    if not isinstance(entries, list):
        out.notes.append(f"task {key} in {out.path.name} is not a list; every sample is invalid")
        for sample_id in out.known:
            out.by_id[sample_id] = Prediction(
                sample_id, status=Status.INVALID, detail=f"task {key} is not a list"
            )
        return
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("sample_id"), str):
            out.malformed.append(f"{key}[{index}]")
            continue
        sample_id = entry["sample_id"]
        if "answer" not in entry:
            pred = Prediction(sample_id, status=Status.INVALID, detail="entry has no answer")
            out.add(sample_id, pred, _NO_ANSWER)
            continue
        out.add(sample_id, Prediction(sample_id, answer=entry["answer"]), entry["answer"])


_NO_ANSWER = object()  # stands for "no usable answer" when comparing duplicates


# --- text rows ---------------------------------------------------------------------------------


def _collect_rows(rows: Iterable[tuple[str, Any]], out: _Collector) -> None:
    for where, row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("sample_id"), str):
            out.malformed.append(where)
            continue
        task = row.get("task_dataset", row.get("task"))
        if task is not None and lookup(str(task)) is not out.info:
            continue  # another task's row
        sample_id = row["sample_id"]
        if "output" not in row and "target" not in row and "answer" in row:
            out.add(sample_id, Prediction(sample_id, answer=row["answer"]), row["answer"])
            continue
        text = row["output"] if "output" in row else row.get("target")
        if not isinstance(text, str):
            detail = "row has no output text" if text is None else "output is not a string"
            pred = Prediction(sample_id, status=Status.INVALID, detail=detail)
            out.add(sample_id, pred, _NO_ANSWER)
            continue
        out.add(sample_id, Prediction(sample_id, raw_text=text), text)


# --- file reading -------------------------------------------------------------------------------


def _load(path: Path) -> tuple[str, Any]:
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise BenchregError("predictions file not found", where=path) from None
    try:
        return _load_cached(str(path), stat.st_mtime_ns, stat.st_size)
    except UnicodeDecodeError as exc:
        raise BenchregError(
            f"predictions file is not UTF-8 text ({exc.reason} at byte {exc.start})",
            where=path,
            fix="write results.json or the JSON Lines file as UTF-8",
        ) from None


@lru_cache(maxsize=4)
def _load_cached(path_str: str, mtime_ns: int, size: int) -> tuple[str, Any]:
    """('results', dict) for a results.json, else ('rows', [(where, row), ...])."""
    path = Path(path_str)
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if not stripped:
        raise BenchregError("predictions file is empty", where=path)
    if stripped[0] in "{[":
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None  # JSON Lines (several objects) or malformed: read line by line below
        if isinstance(whole, dict) and whole and all(isinstance(v, list) for v in whole.values()):
            return "results", whole
        if isinstance(whole, dict) and _looks_like_results(whole):
            return "results", whole
        if isinstance(whole, list):
            return "rows", [(f"{path}[{i}]", row) for i, row in enumerate(whole)]
    return "rows", [(at(path, number), row) for number, row in iter_jsonl(path)]


def _looks_like_results(data: dict[str, Any]) -> bool:
    return any(lookup(key) is not None for key in data) and "sample_id" not in data
