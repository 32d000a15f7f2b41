"""`read_units`: the text stand-ins of every modality cut into units, and the errors for
malformed corpus files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.corpus import READERS, Unit, read_units
from benchreg.families.retrieval.manifest import read_manifest
from benchreg.families.retrieval.records import ManifestRow
from benchreg.families.retrieval.regions import MODALITIES


def source(modality: str, path: str | None, **extra: Any) -> ManifestRow:
    return ManifestRow(source_id="s", modality=modality, path=path, dataset="d", revision="r",
                       license="CC0-1.0", annotation_source="hand-written", **extra)


def write(corpus: Path, name: str, text: str) -> str:
    (corpus / name).parent.mkdir(parents=True, exist_ok=True)
    (corpus / name).write_text(text, "utf-8")
    return name


def jsonl(rows: list[Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def test_every_modality_has_a_reader() -> None:
    assert set(READERS) == set(MODALITIES)


def test_pdf_pages_and_blocks(tmp_path: Path) -> None:
    name = write(tmp_path, "doc.txt", "First block.\n\n  Second\nblock.  \n\n\n\fPage two.\f\n\f")
    assert read_units(source("pdf", name), tmp_path) == [
        Unit({"page": 1, "block": 0}, "First block."),
        Unit({"page": 1, "block": 1}, "Second\nblock."),
        Unit({"page": 2, "block": 0}, "Page two."),
    ]  # pages 3 and 4 are blank: no unit, and the page numbers keep counting


def test_a_blank_page_keeps_the_numbering(tmp_path: Path) -> None:
    name = write(tmp_path, "doc.txt", "one\f\fthree")
    units = read_units(source("pdf", name), tmp_path)
    assert [u.region for u in units] == [{"page": 1, "block": 0}, {"page": 3, "block": 0}]


def test_image_caption(tmp_path: Path) -> None:
    name = write(tmp_path, "img.txt", "  A red kite over a field.\n")
    assert read_units(source("image", name), tmp_path) == [Unit({}, "A red kite over a field.")]


def test_ui_elements(tmp_path: Path) -> None:
    name = write(tmp_path, "screen.jsonl", jsonl([
        {"bbox": [0, 0, 0.5, 0.1], "text": "Search"},
        {"bbox": [0.5, 0, 1, 0.1], "text": 7, "class": "Button"},
    ]))
    assert read_units(source("ui_screenshot", name), tmp_path) == [
        Unit({"bbox": [0, 0, 0.5, 0.1]}, "Search"),
        Unit({"bbox": [0.5, 0, 1, 0.1]}, "7"),
    ]


def test_video_windows_are_floats(tmp_path: Path) -> None:
    name = write(tmp_path, "clip.jsonl", jsonl([{"t_start": 0, "t_end": 2, "text": "intro"}]))
    units = read_units(source("video", name), tmp_path)
    assert units == [Unit({"t_start": 0.0, "t_end": 2.0}, "intro")]
    assert type(units[0].region["t_start"]) is float


def test_code_lines(tmp_path: Path) -> None:
    files = {"pkg/a.py": "import os\n\ndef f():\n    return 1\n", "b.py": "x = 2"}
    name = write(tmp_path, "repo.json", json.dumps(files))
    units = read_units(source("code", name), tmp_path)
    assert [(u.region["path"], u.region["line"], u.text) for u in units] == [
        ("pkg/a.py", 1, "import os"),
        ("pkg/a.py", 2, ""),
        ("pkg/a.py", 3, "def f():"),
        ("pkg/a.py", 4, "    return 1"),
        ("b.py", 1, "x = 2"),
    ]


def test_conversation_turns(tmp_path: Path) -> None:
    name = write(tmp_path, "session.jsonl", jsonl([
        {"turn": 0, "speaker": "alice", "text": "hello"},
        {"turn": "1", "text": "no speaker", "observed_at": "2024-01-10T09:00:00+00:00",
         "holder": "bob"},
    ]))
    assert read_units(source("conversation", name), tmp_path) == [
        Unit({"turn": 0}, "alice: hello"),
        Unit({"turn": 1}, "no speaker", observed_at="2024-01-10T09:00:00+00:00", holder="bob"),
    ]


def test_a_source_without_a_file_has_no_units(tmp_path: Path) -> None:
    assert read_units(source("video", None), tmp_path) == []


@pytest.mark.parametrize(
    ("modality", "text", "message"),
    [
        ("ui_screenshot", jsonl([{"bbox": [0, 0, 1, 1]}]), "a corpus row needs bbox, text"),
        ("video", jsonl([{"t_start": 0, "text": "x"}]), "a corpus row needs t_start, t_end, text"),
        ("conversation", jsonl([["turn", "text"]]), "a corpus row needs turn, text"),
    ],
)
def test_rows_missing_keys(tmp_path: Path, modality: str, text: str, message: str) -> None:
    name = write(tmp_path, "rows.jsonl", text)
    with pytest.raises(BenchregError) as info:
        read_units(source(modality, name), tmp_path)
    assert (info.value.what, info.value.where) == (message, f"{tmp_path / name}:1")


def test_malformed_code_json(tmp_path: Path) -> None:
    name = write(tmp_path, "repo.json", '{\n"a.py": "x"\n"b.py": "y"}')
    with pytest.raises(BenchregError) as info:
        read_units(source("code", name), tmp_path)
    assert info.value.what == "malformed JSON (Expecting ',' delimiter)"
    assert info.value.where == f"{tmp_path / name}:3"


def test_code_must_be_an_object(tmp_path: Path) -> None:
    name = write(tmp_path, "repo.json", '["a.py"]')
    with pytest.raises(BenchregError) as info:
        read_units(source("code", name), tmp_path)
    assert info.value.what == "a code source is a JSON object {path: file text}"


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BenchregError, match="file not found"):
        read_units(source("image", "gone.txt"), tmp_path)


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/hostname"])
def test_a_path_cannot_leave_the_corpus(tmp_path: Path, path: str) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (tmp_path / "outside.txt").write_text("secret", "utf-8")
    with pytest.raises(BenchregError, match=r"manifest path .* leads outside the data root"):
        read_units(source("image", path), corpus)


def test_the_embedded_sample_reads(root: Path) -> None:
    manifest = read_manifest(root)
    units = read_units(manifest.rows["sample-pdf-0"], manifest.corpus_dir)
    assert units[0] == Unit(
        {"page": 1, "block": 0},
        "The Harbor Lighthouse Trust spent 41,200 euros on lens restoration in 2023.",
    )
    for row in manifest.rows.values():
        assert read_units(row, manifest.corpus_dir), row.source_id


def test_a_relative_corpus_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "corpus", "img.txt", "a cat")
    monkeypatch.chdir(tmp_path)
    assert read_units(source("image", "img.txt"), Path("corpus")) == [Unit({}, "a cat")]
