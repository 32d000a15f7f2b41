"""A JSON Lines run read in parts by forked copies (jsonl_parts.py) gives what a one-process read
gives: the same predictions, statuses, duplicates across parts, notes and `file:line`s; a part
whose copy fails or meets a line for the core reader is read by the loading process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchreg.core import partload
from benchreg.core.types import Sample
from benchreg.families.retrieval import jsonl_parts
from benchreg.families.retrieval import predictions as reader
from benchreg.families.retrieval.columns import ResultColumns

from .test_columns import TASK, make_case, same, scored, write_jsonl


def _case(tmp_path: Path, extra: list[Any] = ()) -> tuple[list[Sample], Path]:
    samples, lines = make_case("pdf", 600, seed=5)
    odd = [  # in the part of a copy (the last 45% of the file)
        {"query_id": lines.pop()["query_id"], "output": "model text, for the parser"},
        {"results": []},  # no id: malformed
        {"query_id": "unknown-id", "results": lines[0]["results"]},
        lines[10],  # an identical repeat, far from the first
        {**lines[11], "latency_s": 42.0},  # a conflicting one
    ]
    path = write_jsonl(tmp_path / "run.jsonl", [*lines[:450], *odd, *lines[450:], *extra])
    return samples, path


def _read(path: Path, samples: list[Sample], workers: int, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(partload.WORKERS_ENV, str(workers))
    return reader.read_run(path, samples, TASK)


def _copies_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lines each copy handed back, as the parts are read."""
    handed: list[int] = []
    lines = jsonl_parts.Part.lines

    def counted(part: jsonl_parts.Part) -> Any:
        read = lines(part)
        if read is not None:
            handed.append(len(read[1]))
        return read

    monkeypatch.setattr(jsonl_parts.Part, "lines", counted)
    return handed


@pytest.mark.parametrize("workers", [1, 2])
def test_parts_equal_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    samples, path = _case(tmp_path)
    one = _read(path, samples, 0, monkeypatch)
    handed = _copies_read(monkeypatch)
    parts = _read(path, samples, workers, monkeypatch)
    assert len(handed) == workers and min(handed) > 100  # the copies did read
    assert same(scored(samples, parts.by_id, True), scored(samples, one.by_id, True)) > 400
    assert (parts.notes, parts.unknown_ids) == (one.notes, one.unknown_ids)
    assert "unknown-id" in parts.unknown_ids
    last = parts.by_id[samples[-2].id].answer
    assert isinstance(last["results"], ResultColumns)  # from a copy's columns
    assert parts.by_id["q11"].status.value == "invalid"  # a conflict across parts
    assert parts.by_id[samples[-1].id].raw_text == "model text, for the parser"


def test_line_for_the_core_reader_in_a_copys_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples, path = _case(tmp_path, extra=["not json", '{"query_id": "q1", "query_id": "q2"}'])
    one = _read(path, samples, 0, monkeypatch)
    handed = _copies_read(monkeypatch)
    parts = _read(path, samples, 1, monkeypatch)
    assert handed == []  # the copy left its part: the whole file was read here
    assert same(scored(samples, parts.by_id, True), scored(samples, one.by_id, True)) > 0
    assert parts.notes == one.notes
    assert any(f"{path}:605" in note for note in parts.notes)  # the bad line, by file:line


def test_failed_copy_leaves_its_part_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    samples, path = _case(tmp_path)
    one = _read(path, samples, 0, monkeypatch)
    monkeypatch.setattr(jsonl_parts, "_reader", lambda *args: lambda: (1, None))
    handed = _copies_read(monkeypatch)
    parts = _read(path, samples, 1, monkeypatch)
    assert handed == []
    assert same(scored(samples, parts.by_id, True), scored(samples, one.by_id, True)) > 400
    assert parts.notes == one.notes


def test_a_run_file_that_cannot_be_read_is_one_clear_error(tmp_path: Path) -> None:
    from benchreg.core.errors import BenchregError

    samples, _ = make_case("pdf", 3, seed=1)
    with pytest.raises(BenchregError) as caught:
        reader.read_run(tmp_path / "absent.jsonl", samples, TASK)
    assert "absent.jsonl" in str(caught.value.where) + caught.value.message
