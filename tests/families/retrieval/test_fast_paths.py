"""The shortcuts that stay give what the paths they replace give: query grouping of a TREC
chunk, column slices, the memo of annotation verdicts, the checked entries kept by the loading
door; and a JSON Lines run is read as the core reader reads its lines (every line by its number,
a repeated key or an undecodable line malformed, long numbers as Python reads them)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from benchreg.core.types import Status
from benchreg.families.retrieval import trec
from benchreg.families.retrieval.predictions import read_run

from .test_predictions import RESULT, SAMPLES, TASK


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_group_equals_unique(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"q{i}".encode() for i in range(40)]
    rows = []
    for _ in range(500):  # runs of a query, queries coming back later
        rows += [rng.choice(names)] * rng.randint(1, 5)
    width = max(map(len, rows))
    text = np.array(rows, dtype=f"S{width}")
    grid = text.view(np.uint8).reshape(len(rows), width)
    unique, inverse, first = trec._group(grid, text)
    want_unique, want_inverse = np.unique(text, return_inverse=True)
    _, want_first = np.unique(want_inverse, return_index=True)
    assert unique.tolist() == want_unique.tolist()
    assert inverse.tolist() == want_inverse.reshape(-1).tolist()
    assert first.tolist() == want_first.tolist()


def test_a_jsonl_run_names_its_lines_by_number(tmp_path: Path) -> None:
    """Blank lines and CRLF endings counted; an identical repeat (same value, other spacing
    and key order) ignored, a conflicting one invalid with both lines named."""
    path = tmp_path / "run.jsonl"
    first = json.dumps({"query_id": "q1", "results": [RESULT], "latency_s": 0.5})
    again = json.dumps({"latency_s": 0.5, "results": [RESULT], "query_id": "q1"}, indent=None,
                       separators=(",", ":"))
    path.write_bytes(
        (
            f"{first}\r\n\n   \n"
            + json.dumps({"query_id": "q2", "results": []}) + "\n"
            + f"{again}\n"
            + json.dumps({"query_id": "q2", "results": [RESULT]}) + "\r\n"
        ).encode()
    )
    found = read_run(path, SAMPLES, TASK)
    assert found.by_id["q1"].status is Status.OK
    assert found.by_id["q1"].latency_s == 0.5
    assert (found.by_id["q2"].status, found.by_id["q2"].detail) == (
        Status.INVALID,
        f"conflicting duplicate entries ({path}:4, {path}:6)",
    )
    assert not any("malformed" in note for note in found.notes)


@pytest.mark.parametrize(
    "bad",
    [
        '{"query_id": "q3", "results": [], "results": []}',
        '{"query_id": "q3", "results": [{"source_id": "s0", "source_id": "s1", "region": {}}]}',
        '{"query_id": "q3", "x": "a\\u003ab", "results": [{"region": {"turn": 1, "turn": 2}}]}',
        '{"query_id": "q3", "latency_s": 0.00012970100033271592, "q": 1, "q": 2}',
        "{not json",
    ],
)
@pytest.mark.parametrize("where", [0, 7, 19])
def test_a_line_with_a_repeated_key_is_malformed(tmp_path: Path, bad: str, where: int) -> None:
    rows = [json.dumps({"query_id": f"x{i}", "results": [], "note": f"{i}:{i}"}) for i in range(20)]
    rows[where] = bad
    rows[10] = json.dumps({"query_id": "q1", "results": [RESULT]})
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(rows) + "\n")
    found = read_run(path, SAMPLES, TASK)
    malformed = [n for n in found.notes if "malformed" in n]
    assert len(malformed) == 1 and f"{path}:{where + 1}" in malformed[0]
    assert "q3" not in found.by_id and found.by_id["q1"].status is Status.OK


def test_escaped_colons_and_long_numbers_read_as_python_reads_them(tmp_path: Path) -> None:
    rows = [
        '{"query_id": "q1", "results": [], "latency_s": 0.00012970100033271592}',
        '{"query_id": "q2", "results": [], "n": 123456789012345678901234}',
        '{"query_id": "q\\u003a3", "results": [], "x": "a\\u003ab"}',
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(rows) + "\n")
    samples = [*SAMPLES, SAMPLES[0].__class__("q:3", {}, [], {"modality": "conversation"})]
    found = read_run(path, samples, TASK)
    assert found.by_id["q1"].latency_s == 0.00012970100033271592
    assert found.by_id["q2"].status is Status.OK
    assert found.by_id["q:3"].status is Status.OK
    assert not any("malformed" in note for note in found.notes)


def test_annotation_memo_changes_nothing(root: Path) -> None:
    from benchreg.core.reader import read_records
    from benchreg.families.retrieval.manifest import read_manifest
    from benchreg.families.retrieval.records import Entry
    from benchreg.families.retrieval.validators import annotation_problems

    manifest = read_manifest(root)
    memo: dict = {}
    seen = 0
    for path in sorted((root / "sets").glob("*.jsonl")):
        for record in read_records(path):
            try:
                entry = Entry.model_validate(record.data)
            except ValueError:
                continue
            assert annotation_problems(entry, manifest, memo) == annotation_problems(
                entry, manifest
            )
            seen += 1
    assert seen > 10


@pytest.mark.parametrize("kind", ["jsonl", "trec"])
def test_column_slices_equal_the_items(tmp_path: Path, kind: str) -> None:
    from benchreg.families.retrieval import predictions as reader
    from benchreg.families.retrieval.columns import columns_of

    from .test_columns import TASK, make_case, write_jsonl, write_trec

    samples, lines = make_case("pdf", 60, seed=5)
    if kind == "jsonl":
        path = write_jsonl(tmp_path / "run.jsonl", lines)
    else:
        path = write_trec(tmp_path, samples, lines, seed=2)
    found = reader.read_run(path, samples, TASK).by_id
    checked = 0
    for prediction in found.values():
        held = columns_of(prediction.answer)
        if held is None:
            continue
        every = [held[i] for i in range(len(held))]
        for cut in (
            slice(None, 10),
            slice(2, 5),
            slice(-3, None),
            slice(5, 2),
            slice(None, None, 2),
            slice(0, 1000),
            slice(-1000, 3),
        ):
            assert held[cut] == every[cut], cut
        checked += 1
    assert checked > 10


def test_checked_entries_reused_from_the_cache(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchreg import load_task
    from benchreg.core.load import CACHE_MIN_BYTES, forget
    from benchreg.core.pipeline import load_dataset
    from benchreg.families.retrieval import loader

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    forget()
    sets = root / "sets"
    path = next(p for p in sorted(sets.glob("*.jsonl")) if '"pdf"' in p.read_text())
    lines = path.read_text().splitlines()
    broken = json.loads(next(line for line in lines if '"pdf"' in line))
    broken["query_id"] += "-void"
    broken["split"] = "dev"
    broken["gold"] = [{"source_id": "nowhere", "region": {"page": 1}}]
    padding = " " * CACHE_MIN_BYTES  # a blank line: large enough for the disk cache
    path.write_text("\n".join([*lines, json.dumps(broken), padding]) + "\n")
    spec = load_task("retrieval/pdf")
    first = load_dataset(spec, "dev", root)
    assert (first.info["entries"], first.info["loaded"]) == ("read and checked", "read")
    assert any("nowhere" in str(f) for f in first.info["void"])

    def no_checks(*args: object, **kwargs: object) -> None:
        raise AssertionError("the entries were checked again")

    monkeypatch.setattr(loader, "check_entries", no_checks)
    for source in ("memory", "cache"):
        if source == "cache":
            forget()  # another process: only the disk cache has them
        again = load_dataset(spec, "dev", root)
        assert again.info["loaded"] == source
        assert again.info["entries"].startswith("reused")
        assert again.samples == first.samples
        assert again.info["void"] == first.info["void"] and again.warnings == first.warnings
        assert again.info["unanswerable"] == first.info["unanswerable"]
        assert again.info["demonstration_entries"] == first.info["demonstration_entries"]
    path.write_text(path.read_text() + "\n")  # another sha256: checked again
    with pytest.raises(AssertionError, match="checked again"):
        load_dataset(spec, "dev", root)
    forget()
