"""The loading door (benchreg.core.load): a value comes back from memory or the disk cache only
while its files hold the same bytes, and the family's own read decides everything else."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.load import CACHE_MIN_BYTES, LoadPlan, cache_dir, forget, load


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BENCHREG_DATA_CACHE", raising=False)
    forget()
    yield
    forget()


class Reader:
    """A family's read: counts its calls, gives the file's lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.calls = 0

    def __call__(self) -> list[str]:
        self.calls += 1
        return self.path.read_text("utf-8").splitlines()


def big_file(path: Path, tag: str = "a") -> Path:
    line = f"{tag} " + "x" * 100 + "\n"
    path.write_text(line * (CACHE_MIN_BYTES // len(line) + 1), "utf-8")
    return path


def plan(path: Path, read: Reader, **key: object) -> LoadPlan:
    return LoadPlan("test.lines", (path,), read, key)


def entries() -> list[Path]:
    folder = cache_dir() / "loaded"
    return sorted(folder.glob("*.marshal")) if folder.is_dir() else []


def test_read_then_memory_then_disk(tmp_path: Path) -> None:
    path, read = big_file(tmp_path / "data.txt"), Reader(tmp_path / "data.txt")
    first = load(plan(path, read))
    assert (first.source, read.calls, len(entries())) == ("read", 1, 1)
    again = load(plan(path, read))
    assert (again.source, read.calls) == ("memory", 1)
    forget()  # a new process: only the disk entry is left
    third = load(plan(path, read))
    assert (third.source, read.calls) == ("cache", 1)
    assert third.value == first.value


def test_changed_bytes_are_read_again_and_the_entry_replaced(tmp_path: Path) -> None:
    path, read = big_file(tmp_path / "data.txt"), Reader(tmp_path / "data.txt")
    load(plan(path, read))
    big_file(path, tag="b")  # same size, other bytes
    changed = load(plan(path, read))
    assert (changed.source, read.calls) == ("read", 2)
    assert changed.value[0].startswith("b ")
    assert len(entries()) == 1  # the same files' entry, replaced


def test_the_same_bytes_written_again_come_from_the_disk_entry(tmp_path: Path) -> None:
    path, read = big_file(tmp_path / "data.txt"), Reader(tmp_path / "data.txt")
    load(plan(path, read))
    path.write_bytes(path.read_bytes())  # new change times, same content
    assert load(plan(path, read)).source == "cache"
    assert read.calls == 1


def test_another_key_is_another_value(tmp_path: Path) -> None:
    path, read = big_file(tmp_path / "data.txt"), Reader(tmp_path / "data.txt")
    load(plan(path, read, view="a"))
    assert load(plan(path, read, view="b")).source == "read"
    assert load(plan(path, read, view="a")).source == "memory"
    assert read.calls == 2


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_the_cache_can_be_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    path, read = big_file(tmp_path / "data.txt"), Reader(tmp_path / "data.txt")
    if how == "environment":
        monkeypatch.setenv("BENCHREG_DATA_CACHE", "off")
    cache = how != "argument"
    assert [load(plan(path, read), cache=cache).source for _ in range(2)] == ["read", "read"]
    assert read.calls == 2 and entries() == []


def test_small_files_are_kept_in_memory_only(tmp_path: Path) -> None:
    path = tmp_path / "small.txt"
    path.write_text("one\ntwo\n", "utf-8")
    read = Reader(path)
    assert load(plan(path, read)).source == "read"
    assert load(plan(path, read)).source == "memory"
    assert entries() == []


def test_a_damaged_entry_is_read_again(tmp_path: Path) -> None:
    path, read = big_file(tmp_path / "data.txt"), Reader(tmp_path / "data.txt")
    value = load(plan(path, read)).value
    (entry,) = entries()
    entry.write_bytes(entry.read_bytes()[:-100])  # cut short
    forget()
    again = load(plan(path, read))
    assert (again.source, again.value, read.calls) == ("read", value, 2)


def test_a_failing_read_raises_and_keeps_nothing(tmp_path: Path) -> None:
    path = big_file(tmp_path / "data.txt")

    def bad() -> list[str]:
        raise BenchregError("line 3 is wrong", where=f"{path}:3")

    with pytest.raises(BenchregError, match="line 3 is wrong"):
        load(LoadPlan("test.bad", (path,), bad))
    assert entries() == []


def test_a_missing_file_is_left_to_the_read(tmp_path: Path) -> None:
    path = tmp_path / "missing.txt"

    def read() -> list[str]:
        raise BenchregError("file not found", where=path)

    with pytest.raises(BenchregError, match="file not found"):
        load(LoadPlan("test.missing", (path,), read))


def test_a_value_marshal_cannot_hold_is_not_kept(tmp_path: Path) -> None:
    path = big_file(tmp_path / "data.txt")
    value = load(LoadPlan("test.object", (path,), lambda: [object()])).value
    assert len(value) == 1 and entries() == []


def test_an_unwritable_cache_only_costs_time(tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", "utf-8")
    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(blocker))
    path, read = big_file(tmp_path / "data.txt"), Reader(tmp_path / "data.txt")
    assert load(plan(path, read)).source == "read"
    assert os.path.isfile(blocker)


def test_a_memory_only_value_is_never_written(tmp_path: Path) -> None:
    path, read = big_file(tmp_path / "data.txt"), Reader(tmp_path / "data.txt")
    memory_only = LoadPlan("test.lines", (path,), read, disk=False)
    assert [load(memory_only).source, load(memory_only).source] == ["read", "memory"]
    assert entries() == []
    forget()
    assert load(memory_only).source == "read" and read.calls == 2
