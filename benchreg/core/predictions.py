"""One predictions collector for every family's prediction reader.

A reader decodes its file format and hands each entry to :class:`PredictionCollector`, which
keeps what belongs to the task and reports the rest the same way everywhere:

- an id that is not a sample of the task goes to ``unknown_ids`` (ignored, listed);
- an entry without a usable id is listed as malformed (ignored);
- a repeated id follows the task's duplicate policy: ``reject`` stops with an error naming both
  places; ``conflicts_invalid`` ignores an identical repeat and scores conflicting repeats as
  ``invalid``;
- samples with no entry are listed in a note (the core scores them ``missing``);
- a file that answers none of the task's samples (an empty file, or one whose entries are all
  for other ids or malformed: another split or task?) stops the run with a hint instead of
  scoring 0; a multi-task file with no section for this task gets a note (all missing).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from loguru import logger

from benchreg.core.errors import BenchregError, at
from benchreg.core.types import Prediction, PredictionSet, Sample, Status

DuplicatePolicy = Literal["reject", "conflicts_invalid"]
Where = str | int | tuple[int, str]  # a place, a line number, or (i, key) of a JSON object
MAX_IDS_IN_NOTE = 50
_UNSET = object()


class PredictionCollector:
    def __init__(
        self,
        path: Path,
        samples: Sequence[Sample],
        *,
        task: str,
        duplicates: DuplicatePolicy = "conflicts_invalid",
    ) -> None:
        if duplicates not in ("reject", "conflicts_invalid"):
            raise ValueError(f"unknown duplicate policy {duplicates!r}")
        self.path = path
        self.task = task
        self.duplicates = duplicates
        self._order = [s.id for s in samples]
        self._known = set(self._order)
        self.by_id: dict[str, Prediction] = {}
        self._first: dict[str, tuple[Where, Any]] = {}  # id -> (where, value said)
        self.unknown: dict[str, None] = {}  # ordered set
        self._unknown_where: dict[str, Where] = {}
        self.malformed: list[str] = []
        self.conflicts: list[str] = []
        self.notes: list[str] = []

    def add(
        self, sample_id: str, prediction: Prediction, *, where: Where, value: Any = _UNSET
    ) -> None:
        """One entry of the file; ``value`` is what it said (to tell identical repeats apart).
        ``where`` may be a line number of the file, or ``(i, key)`` for the entry ``key`` of
        the file's object, its ``i``-th (formatted `file:line` or `file[#i] ('key')` only when
        a message names it)."""
        said = prediction.answer if value is _UNSET else value
        if sample_id not in self._known:
            if self.duplicates == "reject" and sample_id in self._unknown_where:
                raise BenchregError(
                    f"duplicate prediction for {sample_id!r} "
                    f"(first at {self._where(self._unknown_where[sample_id])})",
                    where=self._where(where),
                    fix="keep one prediction per sample",
                )
            self._unknown_where.setdefault(sample_id, where)
            self.unknown[sample_id] = None
            return
        if sample_id not in self._first:
            self._first[sample_id] = (where, said)
            self.by_id[sample_id] = prediction
            return
        first_where, first_said = self._first[sample_id]
        if self.duplicates == "reject":
            raise BenchregError(
                f"duplicate prediction for {sample_id!r} (first at {self._where(first_where)})",
                where=self._where(where),
                fix="keep one prediction per sample",
            )
        if sample_id in self.conflicts or first_said == said:
            return
        self.conflicts.append(sample_id)
        self.by_id[sample_id] = Prediction(
            sample_id,
            status=Status.INVALID,
            detail=f"conflicting duplicate entries ({self._where(first_where)}, "
            f"{self._where(where)})",
        )

    def add_all(self, entries: Sequence[tuple[str, Prediction, Where]]) -> None:
        """:meth:`add` of each ``(sample_id, prediction, where)`` in order, the value said being
        the prediction's answer. When nothing was added before, no id repeats and every id is a
        sample's (a well-formed file), that is a few dict and set operations for them all."""
        ids = [entry[0] for entry in entries]
        if (
            not self._first
            and not self._unknown_where
            and self._known.issuperset(ids)
            and len(set(ids)) == len(ids)
        ):
            self.by_id.update(zip(ids, [entry[1] for entry in entries], strict=True))
            self._first.update(zip(ids, [(e[2], e[1].answer) for e in entries], strict=True))
            return
        for sample_id, prediction, where in entries:
            self.add(sample_id, prediction, where=where)

    def _where(self, where: Where) -> str:
        if isinstance(where, int):
            return at(self.path, where)
        if isinstance(where, tuple):
            return f"{self.path}[#{where[0]}] ({where[1]!r})"
        return where

    def add_malformed(self, where: str) -> None:
        """An entry without a usable sample id."""
        self.malformed.append(where)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def _matches_nothing(self) -> BenchregError:
        first = ", ".join(self._order[:3])
        return BenchregError(
            f"none of the {len(self._order)} samples of {self.task} has a prediction in this "
            f"file ({_describe(self)})",
            where=self.path,
            fix=f"is it the file of another split or task? this run expects ids like {first}; "
            "check model.path and view=",
        )

    def finish(self) -> PredictionSet:
        name = self.task
        missing = [sid for sid in self._order if sid not in self.by_id]
        if self._order and len(missing) == len(self._order):
            if self.unknown or self.malformed or _blank(self.path):
                raise self._matches_nothing()
            self.notes.append(  # a multi-task file with no section for this task
                f"{name}: none of the {len(self._order)} samples has a prediction in "
                f"{self.path.name} (a file for another task or split?)"
            )
        elif missing:
            self.notes.append(
                f"{name}: {len(missing)} sample(s) have no prediction: {ids(missing)}"
            )
        if self.unknown:
            self.notes.append(
                f"{name}: {len(self.unknown)} prediction(s) for unknown sample ids, ignored: "
                f"{ids(list(self.unknown))}"
            )
        if self.malformed:
            self.notes.append(
                f"{name}: {len(self.malformed)} malformed entr(y/ies) without a usable sample "
                f"id, ignored: {ids(self.malformed)}"
            )
        if self.conflicts:
            self.notes.append(
                f"{name}: conflicting duplicate predictions, scored as invalid: "
                f"{ids(self.conflicts)}"
            )
        for note in self.notes:
            logger.warning(f"{self.path.name}: {note}")
        return PredictionSet(
            by_id=self.by_id, files=[self.path], unknown_ids=list(self.unknown), notes=self.notes
        )


def _blank(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return not handle.read(4096).strip() and path.stat().st_size < 4096
    except OSError:
        return False


def _describe(collector: PredictionCollector) -> str:
    parts = []
    if collector.unknown:
        shown = ", ".join(list(collector.unknown)[:3])
        parts.append(f"{len(collector.unknown)} entries for other ids, e.g. {shown}")
    if collector.malformed:
        parts.append(f"{len(collector.malformed)} malformed, first at {collector.malformed[0]}")
    return "; ".join(parts) or "the file is empty"


def ids(values: Sequence[str]) -> str:
    shown = ", ".join(values[:MAX_IDS_IN_NOTE])
    rest = len(values) - MAX_IDS_IN_NOTE
    return f"{shown}, ... ({rest} more; see samples.jsonl)" if rest > 0 else shown
