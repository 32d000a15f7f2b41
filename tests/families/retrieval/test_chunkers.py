"""Chunkers: a source's units cut into atoms (regions, text, ids, times and holders), the
window arithmetic, and the errors for a chunker that does not fit the modality."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import benchreg.families.retrieval as retrieval_package
from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.chunkers import (
    CHUNKERS,
    DEFAULT,
    Atom,
    _windows,
    chunk,
    page_chunker,
    symbol_chunker,
    whole_chunker,
    window_chunker,
)
from benchreg.families.retrieval.corpus import Unit
from benchreg.families.retrieval.records import ManifestRow
from benchreg.families.retrieval.regions import MODALITIES, region_problem

T1, T2 = "2024-01-10T09:00:00+00:00", "2024-03-10T09:00:00+00:00"


def row(modality: str, **extra: Any) -> ManifestRow:
    return ManifestRow(source_id="s", modality=modality, dataset="d", revision="r",
                       license="CC0-1.0", annotation_source="hand-written", **extra)


def pdf_units() -> list[Unit]:
    return [
        Unit({"page": 1, "block": 0}, "A"),
        Unit({"page": 1, "block": 1}, "B"),
        Unit({"page": 2, "block": 0}, "C"),
        Unit({"page": 3, "block": 0}, "D"),
    ]


def turns(n: int) -> list[Unit]:
    return [Unit({"turn": t}, f"t{t}") for t in range(n)]


def code_units(path: str, text: str) -> list[Unit]:
    return [Unit({"path": path, "line": i}, line)
            for i, line in enumerate(text.splitlines(), start=1)]


def regions(atoms: list[Atom]) -> list[dict[str, Any]]:
    return [a.region for a in atoms]


# --- windows ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "size", "stride", "expected"),
    [
        (5, 2, 2, [[0, 1], [2, 3], [4]]),
        (5, 3, 1, [[0, 1, 2], [1, 2, 3], [2, 3, 4]]),
        (5, 3, 2, [[0, 1, 2], [2, 3, 4]]),
        (6, 3, 2, [[0, 1, 2], [2, 3, 4], [4, 5]]),
        (2, 5, 5, [[0, 1]]),
        (4, 4, 4, [[0, 1, 2, 3]]),
        (0, 2, 2, []),
    ],
)
def test_windows(n: int, size: int, stride: int, expected: list[list[int]]) -> None:
    assert [list(w) for w in _windows(list(range(n)), size, stride)] == expected


# --- each chunker -----------------------------------------------------------------------------


def test_page_chunker_joins_the_blocks_of_a_page() -> None:
    atoms = page_chunker(row("pdf"), pdf_units(), {})
    assert atoms == [
        Atom("s#page=1", "s", {"page": 1}, "A\nB", None, None),
        Atom("s#page=2", "s", {"page": 2}, "C", None, None),
        Atom("s#page=3", "s", {"page": 3}, "D", None, None),
    ]


def test_block_chunker_keeps_every_unit() -> None:
    atoms = chunk(row("pdf"), pdf_units(), "block")
    assert [a.atom_id for a in atoms] == [
        "s#block=0,page=1", "s#block=1,page=1", "s#block=0,page=2", "s#block=0,page=3"]
    assert [a.text for a in atoms] == ["A", "B", "C", "D"]


def test_ui_blocks() -> None:
    units = [Unit({"bbox": [0.0, 0.0, 0.5, 0.5]}, "OK")]
    atoms = chunk(row("ui_screenshot"), units, "block")
    assert atoms == [Atom("s#bbox=[0.0, 0.0, 0.5, 0.5]", "s", {"bbox": [0.0, 0.0, 0.5, 0.5]},
                          "OK", None, None)]


def test_whole_chunker() -> None:
    units = [Unit({}, "a cat")]
    assert whole_chunker(row("image"), units, {}) == [Atom("s#", "s", {}, "a cat", None, None)]
    assert whole_chunker(row("image"), [], {}) == []


def test_pdf_windows_of_pages() -> None:
    atoms = window_chunker(row("pdf"), pdf_units(), {"size": 2})
    assert regions(atoms) == [{"page_start": 1, "page_end": 2}, {"page_start": 3, "page_end": 3}]
    assert [a.text for a in atoms] == ["A\nB\nC", "D"]
    assert atoms[0].atom_id == "s#page_end=2,page_start=1"


def test_conversation_windows_default_to_five_turns() -> None:
    atoms = window_chunker(row("conversation"), turns(7), {})
    assert regions(atoms) == [{"turn_start": 0, "turn_end": 4}, {"turn_start": 5, "turn_end": 6}]
    atoms = window_chunker(row("conversation"), turns(4), {"size": 2, "stride": 1})
    assert regions(atoms) == [{"turn_start": 0, "turn_end": 1}, {"turn_start": 1, "turn_end": 2},
                              {"turn_start": 2, "turn_end": 3}]


def test_video_windows_span_the_transcript_windows() -> None:
    units = [Unit({"t_start": 0.0, "t_end": 2.0}, "a"), Unit({"t_start": 2.0, "t_end": 4.5}, "b"),
             Unit({"t_start": 5.0, "t_end": 6.0}, "c")]
    atoms = window_chunker(row("video"), units, {"size": 2})
    assert regions(atoms) == [{"t_start": 0.0, "t_end": 4.5}, {"t_start": 5.0, "t_end": 6.0}]
    assert atoms[0].text == "a\nb"


def test_code_windows_per_file() -> None:
    units = code_units("a.py", "1\n2\n3") + code_units("b.py", "1\n2")
    atoms = window_chunker(row("code"), units, {"size": 2})
    assert regions(atoms) == [
        {"path": "a.py", "line_start": 1, "line_end": 2},
        {"path": "a.py", "line_start": 3, "line_end": 3},
        {"path": "b.py", "line_start": 1, "line_end": 2},
    ]


@pytest.mark.parametrize("params", [{"size": -1}, {"size": 2, "stride": -3}])
def test_a_window_needs_a_positive_size_and_stride(params: dict[str, int]) -> None:
    with pytest.raises(BenchregError, match=r"chunker window: size and stride must be >= 1"):
        window_chunker(row("conversation"), turns(3), params)


def test_a_zero_window_size_is_refused() -> None:
    with pytest.raises(BenchregError, match=r"size and stride must be >= 1"):
        window_chunker(row("conversation"), turns(3), {"size": 0})


CODE = '''import os


class Session:
    def request(self):
        return 1


@cache
def helper():
    pass
x = 1
'''


def test_symbol_chunker_qualifies_members_and_keeps_module_code() -> None:
    atoms = symbol_chunker(row("code"), code_units("a.py", CODE), {})
    assert regions(atoms) == [
        {"path": "a.py", "symbol": "Session"},
        {"path": "a.py", "symbol": "Session.request"},
        {"path": "a.py", "symbol": "helper"},
        {"path": "a.py", "line_start": 1, "line_end": 1},
        {"path": "a.py", "line_start": 12, "line_end": 12},
    ]
    texts = [a.text for a in atoms]
    assert texts[0] == "class Session:\n    def request(self):\n        return 1"
    assert texts[1] == "    def request(self):\n        return 1"
    assert texts[2] == "@cache\ndef helper():\n    pass"  # from the decorator on
    assert texts[3:] == ["import os", "x = 1"]


def test_symbol_chunker_cuts_consecutive_module_lines_into_one_run() -> None:
    atoms = symbol_chunker(row("code"), code_units("m.py", "a = 1\nb = 2\n\nc = 3\n"), {})
    assert regions(atoms) == [{"path": "m.py", "line_start": 1, "line_end": 2},
                              {"path": "m.py", "line_start": 4, "line_end": 4}]


def test_a_file_that_is_not_python_is_cut_into_windows() -> None:
    text = "\n".join(f"line {i} {{" for i in range(1, 46))  # unbalanced braces: no Python
    atoms = symbol_chunker(row("code"), code_units("notes.txt", text), {})
    assert regions(atoms) == [{"path": "notes.txt", "line_start": 1, "line_end": 40},
                              {"path": "notes.txt", "line_start": 41, "line_end": 45}]


# --- times, holders ---------------------------------------------------------------------------


def test_an_atom_takes_the_latest_time_of_its_units_as_instants() -> None:
    early_but_greater_text = "2024-01-10T11:00:00+03:00"  # 08:00 UTC
    units = [Unit({"turn": 0}, "a", observed_at=early_but_greater_text),
             Unit({"turn": 1}, "b", observed_at="2024-01-10T09:00:00+00:00")]
    (atom,) = window_chunker(row("conversation", observed_at=T2), units, {"size": 2})
    assert atom.observed_at == "2024-01-10T09:00:00+00:00"


def test_without_unit_times_the_source_time_is_used() -> None:
    (atom,) = window_chunker(row("conversation", observed_at=T1), turns(2), {"size": 2})
    assert atom.observed_at == T1


@pytest.mark.parametrize(
    ("holders", "expected"),
    [(["alice", "alice"], "alice"), (["alice", None], "alice"), (["alice", "bob"], "owner"),
     ([None, None], "owner")],
)
def test_an_atom_holder(holders: list[str | None], expected: str) -> None:
    units = [Unit({"turn": t}, "x", holder=h) for t, h in enumerate(holders)]
    (atom,) = window_chunker(row("conversation", holder="owner"), units, {"size": 2})
    assert atom.holder == expected


# --- chunk() ----------------------------------------------------------------------------------


def test_default_is_the_natural_unit() -> None:
    assert regions(chunk(row("pdf"), pdf_units(), "default")) == [
        {"page": 1}, {"page": 2}, {"page": 3}]
    assert regions(chunk(row("conversation"), turns(2), "default")) == [{"turn": 0}, {"turn": 1}]
    windows = [Unit({"t_start": 0.0, "t_end": 2.0}, "a"), Unit({"t_start": 2.0, "t_end": 4.0}, "b")]
    assert regions(chunk(row("video"), windows, "default")) == [u.region for u in windows]


def test_every_default_is_a_chunker_for_its_modality() -> None:
    assert set(DEFAULT) == set(MODALITIES)
    for modality, name in DEFAULT.items():
        if name != "segment":
            assert modality in CHUNKERS[name][1], (modality, name)


def test_an_unknown_chunker() -> None:
    with pytest.raises(BenchregError) as info:
        chunk(row("pdf"), pdf_units(), "sentence")
    assert info.value.what == "unknown chunker 'sentence'"
    assert info.value.fix == (
        "choose default or one of ['block', 'caption', 'page', 'symbol', 'turn', 'whole', "
        "'window']")


def test_a_chunker_of_another_modality() -> None:
    with pytest.raises(BenchregError) as info:
        chunk(row("conversation"), turns(2), "page")
    assert info.value.what == "chunker 'page' does not cut conversation sources"
    assert info.value.fix == "it cuts pdf; use chunker=default"


def test_chunk_passes_window_params() -> None:
    atoms = chunk(row("conversation"), turns(4), "window", size=3, stride=3)
    assert regions(atoms) == [{"turn_start": 0, "turn_end": 2}, {"turn_start": 3, "turn_end": 3}]


@pytest.mark.parametrize("name", sorted(CHUNKERS))
def test_every_atom_region_is_a_valid_result_region(name: str) -> None:
    samples = {
        "pdf": pdf_units(),
        "conversation": turns(6),
        "code": code_units("a.py", CODE),
        "video": [Unit({"t_start": float(i), "t_end": i + 1.0}, "v") for i in range(3)],
        "ui_screenshot": [Unit({"bbox": [0.0, 0.0, 1.0, 1.0]}, "ui")],
        "image": [Unit({}, "img")],
    }
    for modality in sorted(CHUNKERS[name][1]):
        for atom in chunk(row(modality), samples[modality], name):
            assert region_problem(modality, atom.region, gold=False) is None, (name, atom)


def test_the_chunker_config_options_name_chunkers() -> None:
    options = sorted((Path(retrieval_package.__file__).parent / "conf" / "chunker").glob("*.yaml"))
    assert options
    for option in options:
        assert option.stem in CHUNKERS
        assert f"chunker: {option.stem}" in option.read_text("utf-8").splitlines()
