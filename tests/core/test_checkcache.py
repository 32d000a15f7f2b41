"""The loaded-data cache (core.checkcache): kept by the files' sha256, read back equal."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg.core import checkcache


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(checkcache, "LOADED_MIN_BYTES", 0)
    monkeypatch.setattr(checkcache, "ROWS_PER_CHUNK", 3)  # several chunks for a few rows
    return tmp_path / "cache"


def test_rows_come_back_equal_across_chunks_and_only_for_the_same_bytes(
    cache: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data.json"
    data.write_text("[1, 2]", encoding="utf-8")
    rows = [(f"q{i}", {"options": [{"k": "v"}] * i}, [i], {"x": i / 3}) for i in range(10)]
    assert checkcache.loaded("t", [data], {"p": 1}) is None
    checkcache.store_loaded("t", [data], rows, {"p": 1})
    assert checkcache.loaded("t", [data], {"p": 1}) == rows
    assert checkcache.loaded("t", [data], {"p": 2}) is None  # other params
    assert checkcache.loaded("u", [data], {"p": 1}) is None  # another kind
    data.write_text("[1, 3]", encoding="utf-8")
    assert checkcache.loaded("t", [data], {"p": 1}) is None  # changed bytes


@pytest.mark.parametrize("cut", ["inside a chunk", "between chunks", "end marker"])
def test_an_entry_cut_short_is_ignored(cache: Path, tmp_path: Path, cut: str) -> None:
    """Entries are written without fsync: a power loss may leave one cut short."""
    data = tmp_path / "data.json"
    data.write_text("[1]", encoding="utf-8")
    checkcache.store_loaded("t", [data], [("a",)] * 7)
    (entry,) = (cache / "loaded").iterdir()
    whole = entry.read_bytes()
    assert checkcache.loaded("t", [data]) == [("a",)] * 7
    header = whole.index(b"\n") + 1
    first_chunk = header + 8 + int.from_bytes(whole[header : header + 8], "little")
    keep = {
        "inside a chunk": first_chunk - 3,
        "between chunks": first_chunk,
        "end marker": len(whole) - 8,
    }[cut]
    entry.write_bytes(whole[:keep])
    assert checkcache.loaded("t", [data]) is None


def test_the_cache_can_be_turned_off(cache: Path, tmp_path: Path, monkeypatch) -> None:
    data = tmp_path / "data.json"
    data.write_text("[1]", encoding="utf-8")
    monkeypatch.setenv("BENCHREG_VALIDATION_CACHE", "off")
    checkcache.store_loaded("t", [data], [("a",)])
    assert checkcache.loaded("t", [data]) is None and not cache.exists()


def test_rows_are_read_back_with_the_collector_paused(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever reads an entry back (a loader that pauses the collector itself or a plain
    script) reads it without collector passes over the growing heap; the collector is on again
    afterwards."""
    import gc
    import marshal

    data = tmp_path / "data.json"
    data.write_text("[1]", encoding="utf-8")
    rows = [(f"q{i}", {"k": [i]}) for i in range(7)]
    checkcache.store_loaded("t", [data], rows)
    collector_on: list[bool] = []
    real_loads = marshal.loads

    def loads(blob: bytes):  # type: ignore[no-untyped-def]
        collector_on.append(gc.isenabled())
        return real_loads(blob)

    monkeypatch.setattr(checkcache.marshal, "loads", loads)
    assert gc.isenabled()
    assert checkcache.loaded("t", [data]) == rows
    assert collector_on == [False, False, False] and gc.isenabled()


def test_deferred_inputs_come_back_equal_and_are_decoded_once_per_chunk_when_read(
    cache: Path, tmp_path: Path
) -> None:
    """``defer_inputs``: the samples equal those stored (ids, inputs, golds, metas, order); a
    list's length is known without decoding; reading one input decodes its chunk only."""
    import pickle

    from benchreg.core.types import DeferredInput, Sample, samples_of_rows

    data = tmp_path / "data.json"
    data.write_text("[1]", encoding="utf-8")
    rows = [
        (f"r{i}", {"candidates": ["C"] * (i % 4 + 1), "note": "x", "n": [i] * i}, i % 2, {"i": i})
        for i in range(8)
    ]
    checkcache.store_loaded("t", [data], rows, defer_inputs=True)
    back = checkcache.loaded("t", [data])
    assert back is not None and [type(row[1]) for row in back] == [DeferredInput] * 8
    samples = samples_of_rows(back)
    assert [s.length_of("candidates") for s in samples] == [i % 4 + 1 for i in range(8)]
    assert [s.length_of("n") for s in samples] == list(range(8))
    chunks = [row[1]._chunk for row in back]  # ROWS_PER_CHUNK = 3: chunks of 3, 3, 2
    assert len({id(chunk) for chunk in chunks}) == 3
    assert all(chunk._values is None for chunk in chunks)  # nothing decoded yet
    assert samples[4].input == rows[4][1]
    assert [chunk._values is not None for chunk in chunks] == [False] * 3 + [True] * 3 + [False] * 2
    assert samples == [Sample(*row) for row in rows]
    assert repr(samples[7]) == repr(Sample(*rows[7]))
    assert pickle.loads(pickle.dumps(samples[1])) == Sample(*rows[1])
    fresh = samples_of_rows(checkcache.loaded("t", [data]) or [])[0]
    assert fresh.length_of("note") == 1  # not a list: read from the input itself
    with pytest.raises(KeyError):
        fresh.length_of("absent")
