"""A large JSON Lines run read in parts at once: this process reads the first, forked copies of
it (`benchreg.core.partload.fork_copy`) one each of the others.

Decoding 100,000 lines of 100 results is most of scoring such a run, and Python threads cannot
decode in parallel; processes can. The file is cut at line starts into parts (as many as
`benchreg.core.partload.worker_count` allows: 2 on 2 CPUs; the first a little larger). A copy
reads its part as this process would (`jsonl_stream.stream_lines`), keeps the results of each
line of the common shape in its own `RunColumns` (`JsonlColumns.add`), and hands back, in file
order, per line either ``(number, offset, size, query_id, latency_s, start, stop, keys)`` (its
results in the copy's columns) or ``(number, offset, size)`` for every other line (no
``results``, another shape, no usable id: this process decodes that line again and treats it as
always). This process appends a copy's columns to its own (source ids interned again) and adds
the lines to the collector in file order, so the predictions, the messages and the `file:line`s
are those of a one-process read.

A copy that fails, or meets anything `stream_lines` leaves to the core reader, is left to this
process: it reads that part itself, and the core reader's path names the problem.
"""

from __future__ import annotations

import marshal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from benchreg.core import partload
from benchreg.families.retrieval.columns import JsonlColumns
from benchreg.families.retrieval.jsonl_stream import FallBack, stream_lines

FALLBACK_EXIT = partload.PART_PROBLEM_EXIT  # the core reader (or this process) reads the part
# this process's part is larger: a copy also writes its lines out, and this process hashes the
# run file meanwhile (100k x 100 results measured: halves took 7.9 s here and 9.5 s in the copy)
PARENT_SHARE = 1.2


def latency_of(obj: dict[str, Any]) -> float | None:
    latency = obj.get("latency_s")
    return float(latency) if isinstance(latency, int | float) else None


@dataclass
class Part:
    start: int
    end: int | None  # None: to the end of the file
    copy: partload.ForkedWorker | None = None
    out: Path | None = None

    def lines(self) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]] | None:
        """The copy's (columns block, lines) once it has ended, or None (read the part here)."""
        if self.copy is None or self.out is None:
            return None
        code = self.copy.wait()
        if code != 0:
            log = self.out.with_suffix(".log")
            last = log.read_text("utf-8", "replace").strip().splitlines()[-1:]
            logger.debug(f"run part {self.start}-{self.end}: its copy exited with {code} {last}")
            return None
        try:
            with self.out.open("rb") as handle:
                return marshal.load(handle)
        except (OSError, EOFError, ValueError, TypeError):  # (a copy that exited 0 wrote it whole)
            return None


@contextmanager
def parts_read(path: Path, modality: str | None) -> Iterator[list[Part]]:
    """The file's parts, every one but the first being read by a forked copy (one part, the
    whole file, where copies are not worth it or not safe); copies still running when the block
    ends are stopped."""
    workers = partload.worker_count(path) if modality is not None else 0
    if workers < 1 or not partload.forking():
        yield [Part(0, None)]  # (a file that cannot be read: the core reader names the problem)
        return
    shares = [PARENT_SHARE] + [1.0] * workers
    parts = [Part(start, end) for start, end in partload.line_cuts(path, shares)]
    with tempfile.TemporaryDirectory(prefix="benchreg-run-parts-") as tmp:
        try:
            for k, part in enumerate(parts[1:], start=1):
                part.out = Path(tmp) / f"part{k}.marshal"
                work = _reader(path, part.start, part.end, modality, part.out)
                part.copy = partload.fork_copy(work, part.out.with_suffix(".log"))
            yield parts
        finally:
            for part in parts:
                if part.copy is not None and part.copy.poll() is None:
                    part.copy.kill()
                    with suppress(ChildProcessError):
                        part.copy.wait()


def _reader(path: Path, start: int, end: int | None, modality: Any, out: Path) -> Any:
    def work() -> tuple[int, Any]:
        columns = JsonlColumns(modality)
        lines: list[tuple[Any, ...]] = []
        try:
            for number, offset, size, obj in stream_lines(path, start, end):
                lines.append(_line(columns, number, offset, size, obj))
        except FallBack:
            return FALLBACK_EXIT, None
        with out.open("wb") as handle:
            marshal.dump((columns.run.block(), lines), handle)
        return 0, (columns, lines)

    return work


def _line(columns: JsonlColumns, number: int, offset: int, size: int, obj: Any) -> tuple[Any, ...]:
    if type(obj) is dict and "results" in obj:
        qid = obj.get("query_id")
        if type(qid) is str and qid:
            held = columns.add(obj["results"])
            if held is not None:
                return number, offset, size, qid, latency_of(obj), held.start, held.stop, held.keys
    return number, offset, size
