"""The second pass's shortcuts give what the paths they replace give: query grouping of a TREC
chunk, the batched repeated-key check of the JSONL stream, the memo of annotation verdicts."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from benchreg.families.retrieval import jsonl_stream, trec


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


def _lines(path: Path) -> list[tuple[int, int, int, object]]:
    return list(jsonl_stream.stream_lines(path))


def test_stream_reads_every_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl_stream, "BATCH_LINES", 3)
    monkeypatch.setattr(jsonl_stream, "CHUNK_BYTES", 200)
    rows = [{"a": i, "b": {"c": f"x:{i}", "d": [1, {"e": 2}]}} for i in range(50)]
    text = (
        "\n".join(json.dumps(r) for r in rows[:20])
        + "\n\n"
        + "\n".join(json.dumps(r) for r in rows[20:])
    )
    path = tmp_path / "run.jsonl"
    path.write_text(text)
    got = _lines(path)
    assert [v for *_, v in got] == rows
    data = path.read_bytes()
    for number, offset, size, value in got:
        assert json.loads(data[offset : offset + size]) == value
        assert data.split(b"\n")[number - 1] == data[offset : offset + size]


@pytest.mark.parametrize(
    "bad",
    [
        '{"a": 1, "b": {"c": 1, "c": 2}}',  # a repeated nested key
        '[{"a": 1, "a": 2}]',
        '{"a": "x\\u003ay", "b": {"c": 1, "c": 2}}',  # an escaped colon, a repeated key
    ],
)
@pytest.mark.parametrize("where", [0, 7, 19])
def test_stream_falls_back_on_a_repeated_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str, where: int
) -> None:
    monkeypatch.setattr(jsonl_stream, "BATCH_LINES", 8)
    rows = [json.dumps({"a": i, "b": {"c": f"{i}:{i}"}}) for i in range(20)]
    rows[where] = bad
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(jsonl_stream.FallBack):
        _lines(path)


def test_stream_leaves_escaped_colons_to_the_core_reader(tmp_path: Path) -> None:
    rows = ['{"a": 1}', '{"a": "x\\u003ay", "b": {"c": 1}}']  # as before: not provably kept
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(jsonl_stream.FallBack):
        _lines(path)


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
    from benchreg.core import checkcache
    from benchreg.core.pipeline import load_dataset
    from benchreg.families.retrieval import loader

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(checkcache, "LOADED_MIN_BYTES", 0)
    sets = root / "sets"
    path = next(p for p in sorted(sets.glob("*.jsonl")) if '"pdf"' in p.read_text())
    lines = path.read_text().splitlines()
    broken = json.loads(next(line for line in lines if '"pdf"' in line))
    broken["query_id"] += "-void"
    broken["split"] = "dev"
    broken["gold"] = [{"source_id": "nowhere", "region": {"page": 1}}]
    path.write_text("\n".join([*lines, json.dumps(broken)]) + "\n")
    spec = load_task("retrieval/pdf")
    first = load_dataset(spec, "dev", root)
    assert first.info["entries"] == "read and checked"
    assert any("nowhere" in str(f) for f in first.info["void"])

    def no_checks(*args: object, **kwargs: object) -> None:
        raise AssertionError("the entries were checked again")

    monkeypatch.setattr(loader, "check_entries", no_checks)
    again = load_dataset(spec, "dev", root)
    assert again.info["entries"].startswith("reused")
    assert again.samples == first.samples
    assert again.info["void"] == first.info["void"] and again.warnings == first.warnings
    assert again.info["unanswerable"] == first.info["unanswerable"]
    assert again.info["demonstration_entries"] == first.info["demonstration_entries"]
    path.write_text(path.read_text() + "\n")  # another sha256: checked again
    with pytest.raises(AssertionError, match="checked again"):
        load_dataset(spec, "dev", root)


def test_sample_of_dumps_as_pydantic(root: Path) -> None:
    from benchreg.core.reader import read_records
    from benchreg.families.retrieval.loader import sample_of
    from benchreg.families.retrieval.manifest import read_manifest
    from benchreg.families.retrieval.records import Entry
    from benchreg.families.retrieval.validators import Located, check_entries

    manifest = read_manifest(root)
    records = [r for p in sorted((root / "sets").glob("*.jsonl")) for r in read_records(p)]
    by_where = {r.where: r.data for r in records}
    valid, _ = check_entries(records, manifest)
    assert len(valid) > 10
    for located in valid:
        model = Entry.model_validate(by_where[located.where])
        sample = sample_of(located)
        assert sample == sample_of(Located(model, located.where, located.demonstration))
        pairs = ((sample.input["scope"], model.scope), (sample.meta["origin"], model.origin))
        for got, part in pairs:
            want = part.model_dump()
            assert got == want and list(got) == list(want)  # the same keys, in the same order


def test_long_numbers_are_read_by_the_core_decoder_line_by_line(tmp_path: Path) -> None:
    """A latency Python printed with 20 digits, or an integer beyond 64 bits, keeps the stream
    (those lines decoded as the core reader decodes them); the values equal the core reader's."""
    from benchreg.core.reader import json_lines

    rows = [
        '{"query_id": "q1", "results": [], "latency_s": 0.00012970100033271592}',
        '{"query_id": "q2", "results": [{"a": 1}], "n": 123456789012345678901234}',
        '{"query_id": "q3", "results": [{"a": {"b": 2}}]}',
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(rows) + "\n")
    got = _lines(path)
    want = [(number, value) for number, value, _ in json_lines(path)]
    assert [(n, v) for n, _, _, v in got] == want
    assert got[1][3]["n"] == 123456789012345678901234  # an int, as the core reader gives it


def test_a_repeated_key_on_a_long_number_line_falls_back(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"q": 1, "q": 2, "latency_s": 0.00012970100033271592}\n')
    with pytest.raises(jsonl_stream.FallBack):
        _lines(path)
