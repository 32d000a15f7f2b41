"""The answers of one run, appended to its folder as they arrive, so that a crash loses nothing.

Each line is one answered request (sample id, status, raw text or structured answer, detail,
latency, metadata), appended as the answer arrives (:meth:`Journal.append_one`, the sink a system
calls) or, for a system that answers whole batches, after each batch; lines are flushed at once
and fsynced at most every ``FSYNC_EVERY_S`` seconds (and on close). A line torn by a kill is
ignored when the journal is read back. Answers with status ``error`` are kept for the record but
asked again on resume.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from benchreg.core.provenance import scrub
from benchreg.core.types import Prediction, Status

JOURNAL_FILE = "journal.jsonl"
FSYNC_EVERY_S = 1.0


def _row(pred: Prediction) -> dict[str, Any]:
    return {
        "id": pred.sample_id,
        "status": pred.status.value,
        "answer": pred.answer,
        "raw_text": pred.raw_text,
        "detail": pred.detail,
        "latency_s": pred.latency_s,
        "metadata": pred.metadata,
    }


def _prediction(row: dict[str, Any]) -> Prediction:
    return Prediction(
        sample_id=str(row["id"]),
        answer=row.get("answer"),
        status=Status(row["status"]),
        raw_text=row.get("raw_text"),
        detail=row.get("detail"),
        latency_s=row.get("latency_s"),
        metadata=dict(row.get("metadata") or {}),
    )


def _line(pred: Prediction) -> bytes:
    """One journal line: orjson where it can (see :func:`benchreg.core.io.json_line`), else
    `json`, an object neither can hold written as its text, as before."""
    row = scrub(_row(pred))
    try:
        return orjson.dumps(row, default=str, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        return (json.dumps(row, ensure_ascii=False, default=str) + "\n").encode("utf-8")


def _loads(line: bytes) -> Any:
    """A journal line: orjson, or `json` for what only it reads (NaN, long integers)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def holds_answers(folder: Path) -> bool:
    """Whether the journal in ``folder`` holds any answer (a line whose status is not
    ``error``); read only, never cut: the folder may belong to another run."""
    path = folder / JOURNAL_FILE
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        for line in handle:
            try:
                status = _loads(line).get("status")
            except (ValueError, AttributeError):
                return False  # a torn line ends what the journal holds
            if status != Status.ERROR.value:
                return True
    return False


class Journal:
    def __init__(self, folder: Path) -> None:
        self.path = folder / JOURNAL_FILE
        self._handle: Any = None
        self._last_sync = 0.0
        self._written: set[int] = set()  # id() of the predictions this attempt journaled

    def load(self, *, errors: bool = False) -> dict[str, Prediction]:
        """Answers journaled by earlier attempts of this run (errors left out: they are re-asked;
        with ``errors``, a request whose latest line is a failure keeps it, to say why it
        failed). A torn last line is cut off so that new lines start on a clean line."""
        if not self.path.is_file():
            return {}
        raw = self.path.read_bytes()
        good_end = 0
        found: dict[str, Prediction] = {}
        for line in raw.splitlines(keepends=True):
            try:
                pred = _prediction(_loads(line))
            except (ValueError, KeyError, TypeError):
                break
            good_end += len(line)
            if pred.status is Status.ERROR and not errors:
                found.pop(pred.sample_id, None)
            else:  # the latest line of a request wins
                found[pred.sample_id] = pred
        if good_end < len(raw):
            with self.path.open("r+b") as handle:
                handle.truncate(good_end)
        return found

    def append_one(self, prediction: Prediction) -> None:
        """Journal one answer as it arrives (a later :meth:`append` of it is skipped)."""
        self.append([prediction])

    def append(self, predictions: Sequence[Prediction]) -> None:
        fresh = [p for p in predictions if id(p) not in self._written]
        if not fresh:
            return
        if self._handle is None:
            self._handle = self.path.open("ab")
        self._handle.write(b"".join([_line(pred) for pred in fresh]))
        self._written.update(id(pred) for pred in fresh)
        self._handle.flush()
        now = time.monotonic()
        if now - self._last_sync >= FSYNC_EVERY_S:
            os.fsync(self._handle.fileno())
            self._last_sync = now

    def close(self) -> None:
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None
