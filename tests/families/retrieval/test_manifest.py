"""`read_manifest` (the embedded sample and broken manifests) and `sha256_problems`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.manifest import MANIFEST, read_manifest, sha256_problems


def row(source_id: str, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "source_id": source_id,
        "modality": "image",
        "dataset": "d",
        "revision": "r1",
        "license": "CC0-1.0",
        "annotation_source": "hand-written",
    }
    return {**data, **changes}


def write_manifest(root: Path, rows: list[Any]) -> Path:
    path = root / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def test_the_embedded_sample(root: Path) -> None:
    manifest = read_manifest(root)
    assert manifest.path == root / "corpus" / "manifest.jsonl"
    assert manifest.corpus_dir == root / "corpus"
    assert len(manifest.rows) == 31  # 4 sources of each modality, 11 images
    modalities = [r.modality for r in manifest.rows.values()]
    assert modalities.count("image") == 11 and modalities.count("pdf") == 4
    assert manifest.revisions() == {("benchreg-sample-retrieval", "2024.1")}
    first = manifest.rows["sample-pdf-0"]
    assert (first.path, first.holder) == ("pdf/report_0.txt", "alice")
    assert first.observed_at == "2024-01-10T09:00:00+00:00"
    assert manifest.where["sample-pdf-0"] == f"{manifest.path}:1"
    assert sha256_problems(manifest) == []


def test_a_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(BenchregError) as info:
        read_manifest(tmp_path)
    assert info.value.what == "corpus manifest not found"
    assert info.value.where == str(tmp_path / "corpus" / "manifest.jsonl")
    assert "sets/*.jsonl and corpus/manifest.jsonl" in (info.value.fix or "")


def test_revisions_are_distinct_pairs(tmp_path: Path) -> None:
    write_manifest(tmp_path, [row("a"), row("b"), row("c", revision="r2"), row("d", dataset="e")])
    assert read_manifest(tmp_path).revisions() == {("d", "r1"), ("d", "r2"), ("e", "r1")}


def test_a_bad_row_names_its_field_and_line(tmp_path: Path) -> None:
    path = write_manifest(tmp_path, [row("a"), row("b", modality="audio")])
    with pytest.raises(BenchregError) as info:
        read_manifest(tmp_path)
    assert info.value.where == f"{path}:2"
    assert info.value.what.startswith("modality: Input should be 'pdf', 'image'")


def test_a_missing_field(tmp_path: Path) -> None:
    bad = row("a")
    del bad["license"]
    path = write_manifest(tmp_path, [bad])
    with pytest.raises(BenchregError) as info:
        read_manifest(tmp_path)
    assert (info.value.what, info.value.where) == ("license: Field required", f"{path}:1")


def test_observed_at_needs_an_offset(tmp_path: Path) -> None:
    path = write_manifest(tmp_path, [row("a", observed_at="2024-01-10")])
    with pytest.raises(BenchregError) as info:
        read_manifest(tmp_path)
    assert info.value.what == "observed_at: time '2024-01-10' has no UTC offset (write e.g. +00:00)"
    assert info.value.where == f"{path}:1"


def test_a_repeated_source_id(tmp_path: Path) -> None:
    path = write_manifest(tmp_path, [row("a"), row("b"), row("a")])
    with pytest.raises(BenchregError) as info:
        read_manifest(tmp_path)
    assert info.value.what == f"duplicate source_id 'a' (first at {path}:1)"
    assert info.value.where == f"{path}:3"


def test_a_row_that_is_not_an_object(tmp_path: Path) -> None:
    path = write_manifest(tmp_path, [row("a"), ["b"]])
    with pytest.raises(BenchregError, match="a manifest row must be a JSON object") as info:
        read_manifest(tmp_path)
    assert info.value.where == f"{path}:2"


def test_sha256_problems(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "image").mkdir(parents=True)
    (corpus / "image" / "good.txt").write_text("a cat", "utf-8")
    (corpus / "image" / "changed.txt").write_text("a dog", "utf-8")
    (corpus / "image" / "unhashed.txt").write_text("a cow", "utf-8")
    good = hashlib.sha256(b"a cat").hexdigest()
    actual = hashlib.sha256(b"a dog").hexdigest()
    path = write_manifest(tmp_path, [
        row("good", path="image/good.txt", sha256=good),
        row("changed", path="image/changed.txt", sha256=good),
        row("gone", path="image/gone.txt", sha256=good),
        row("unhashed", path="image/unhashed.txt"),
        row("unshipped"),  # no path: nothing to check
    ])
    assert sha256_problems(read_manifest(tmp_path)) == [
        (f"{path}:2", f"source 'changed': sha256 of image/changed.txt is {actual}, "
                      f"manifest says {good}"),
        (f"{path}:3", "source 'gone': file image/gone.txt not found"),
        (f"{path}:4", "source 'unhashed': no sha256 for image/unhashed.txt"),
    ]


def test_a_changed_sample_file_is_found(root: Path) -> None:
    (root / "corpus" / "pdf" / "report_1.txt").write_text("edited", "utf-8")
    problems = sha256_problems(read_manifest(root))
    assert [p[1].split(":")[0] for p in problems] == ["source 'sample-pdf-1'"]
    assert problems[0][0] == f"{root / 'corpus' / 'manifest.jsonl'}:2"
