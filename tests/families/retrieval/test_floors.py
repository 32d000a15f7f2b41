"""Floors (benchreg/families/retrieval/floors.py, benchreg/core/floors.py) on a root built here:
one screen of 12 hand-placed elements and three entries whose gold element is known, so the
floors' values are worked out by hand; the floors in metrics.json, the run table and the family
headline; and the BM25 baseline ranking the whole screen (not only the elements sharing a word).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchreg import RunOptions, load_task, run_task
from benchreg.core import registry
from benchreg.core.floors import floor_makers
from benchreg.core.outputs import write_run
from benchreg.core.reporting import ReportInput
from benchreg.core.summary import run_table
from benchreg.families.retrieval.floors import K, Units, _windows
from benchreg.families.retrieval.records import ManifestRow
from tests.families.retrieval.conftest import read_jsonl, write_jsonl

pytest.importorskip("bm25s", reason="the retrieval baseline needs bm25s (pip install bm25s)")

FAST = RunOptions(progress=False, n_boot=200)
SCREEN = "hand-screen"
N_ELEMENTS = 12
WORDS = {7: "search magnifier"}  # element 7 is the only one with words: the rest are icons


def box(i: int) -> list[float]:
    """Element i: a full-width strip, the i-th of 12 from the top (no two overlap)."""
    return [0.0, i / N_ELEMENTS, 1.0, (i + 1) / N_ELEMENTS]


def entry(qid: str, question: str, element: int) -> dict[str, Any]:
    return {
        "query_id": qid, "modality": "ui_screenshot", "question": question, "answer": None,
        "answer_format": "none", "gold": [{"source_id": SCREEN, "region": {"bbox": box(element)}}],
        "scope": {"holder": None, "session": SCREEN, "scenario": "hand"}, "as_of": None,
        "unanswerable": False, "split": "dev",
        "origin": {"dataset": "benchreg-sample-retrieval", "revision": "2024.1", "item": qid,
                   "license": "CC0-1.0 (written for benchreg)"},
    }


@pytest.fixture
def screen_root(root: Path) -> Path:
    """The sample root with its ui set replaced: one screen, gold at elements 0, 4 and 11."""
    corpus = root / "corpus" / "ui_screenshot" / "hand.jsonl"
    write_jsonl(corpus, [{"bbox": box(i), "text": WORDS.get(i, "")} for i in range(N_ELEMENTS)])
    manifest = root / "corpus" / "manifest.jsonl"
    rows = read_jsonl(manifest)
    template = next(r for r in rows if r["modality"] == "ui_screenshot")
    row = {**template, "source_id": SCREEN, "path": "ui_screenshot/hand.jsonl",
           "sha256": hashlib.sha256(corpus.read_bytes()).hexdigest()}
    row.pop("holder", None), row.pop("observed_at", None)
    write_jsonl(manifest, [*rows, row])
    write_jsonl(root / "sets" / "ui_screenshot.jsonl", [
        entry("hand-0", "open the menu", 0),        # first_10: rank 1
        entry("hand-1", "the fifth icon", 4),       # first_10: rank 5
        entry("hand-2", "tap search", 11),          # first_10: not in the first 10
    ])
    return root


def ui_run(root: Path, **params: Any) -> Any:
    system = {"name": "baseline", "params": params} if params else None
    return run_task(load_task("retrieval/ui_screenshot"), roots={"retrieval": root},
                    system_cfg=system, options=FAST)


def test_the_family_registers_its_floors() -> None:
    registry.load_components()
    assert "retrieval" in floor_makers.registered()


def test_first_10_and_random_by_hand(screen_root: Path) -> None:
    result = ui_run(screen_root)
    first = result.floor["first_10"]["metrics"]
    # gold at ranks 1, 5 and (cut) 12: recall 2/3, MRR (1 + 1/5 + 0) / 3, nDCG (1 + 1/log2 6) / 3
    assert first["recall@10"]["value"] == pytest.approx(2 / 3)
    assert first["mrr"]["value"] == pytest.approx(1.2 / 3)
    assert first["mrr@10"]["value"] == pytest.approx(1.2 / 3)  # the rank-12 hit scores 0 anyway
    assert first["ndcg@10"]["value"] == pytest.approx((1 + 1 / math.log2(6)) / 3)
    assert first["recall@10"]["n"] == 3 and len(first["recall@10"]["ci95"]) == 2
    # each of the 10 results is one strip of 1/12 of the screen
    assert first["context@10"]["value"] == pytest.approx(1 / 12)
    rand = result.floor["random"]["metrics"]
    assert set(rand) == {"recall@10", "mrr", "mrr@10", "ndcg@10", "context@10"}
    again = ui_run(screen_root).floor["random"]
    assert again["metrics"]["mrr"] == rand["mrr"]  # seeded: the same order every run


def test_random_ranks_every_element_once_reproducibly(screen_root: Path) -> None:
    from benchreg.core.system import SystemContext
    from benchreg.core.types import Sample

    task = load_task("retrieval/ui_screenshot")
    sample = Sample("hand-1", {"question": "x"}, [], {"session": SCREEN})
    ctx = SystemContext(task, "dev", screen_root, [sample], options={"seed": 3})
    floors = floor_makers.registered()["retrieval"](ctx)
    assert floors is not None
    ranked = floors.floors["random"].answer(sample)["results"]
    assert sorted(tuple(r["region"]["bbox"]) for r in ranked) == [
        tuple(box(i)) for i in range(N_ELEMENTS)]
    assert floors.floors["random"].answer(sample) == floors.floors["random"].answer(sample)
    first = floors.floors["first_10"].answer(sample)["results"]
    assert [r["region"]["bbox"] for r in first] == [box(i) for i in range(K)]


def test_video_floor_is_ten_equal_windows_of_the_clip() -> None:
    row = ManifestRow(source_id="v", modality="video", dataset="d", revision="r", license="l",
                      annotation_source="a", duration=150)
    windows = _windows(row, 150)
    assert [(w.region["t_start"], w.region["t_end"]) for w in windows] == [
        (15.0 * i, 15.0 * (i + 1)) for i in range(10)]
    assert _windows(row, None) == [] and _windows(row, 0) == []


def test_pdf_pages_count_from_the_manifest(root: Path) -> None:
    """Pages without a text layer are pages too: the floor counts them from `pages`."""
    from benchreg.core.system import SystemContext

    manifest = root / "corpus" / "manifest.jsonl"
    rows = read_jsonl(manifest)
    pdf = next(r for r in rows if r["modality"] == "pdf")
    pdf["pages"] = 14
    write_jsonl(manifest, rows)
    ctx = SystemContext(load_task("retrieval/pdf"), "dev", root, [])
    assert [u.region for u in Units(ctx).of(pdf["source_id"])] == [
        {"page": p} for p in range(1, 15)]


def test_floor_in_metrics_json_run_table_and_headline(screen_root: Path, tmp_path: Path) -> None:
    result = ui_run(screen_root)
    record = write_run(tmp_path, result, {})
    on_disk = json.loads((tmp_path / "metrics.json").read_text("utf-8"))
    assert on_disk["floor"] == record["floor"]
    recall = on_disk["floor"]["first_10"]["metrics"]["recall@10"]
    assert recall["value"] == pytest.approx(2 / 3) and recall["n"] == 3 and "ci95" in recall
    assert "description" in on_disk["floor"]["random"]
    table = run_table(on_disk)
    assert "floor first_10: recall@10 0.6667" in table and "floor random: recall@10" in table
    made = registry.report_parts.get("retrieval").headline(
        ReportInput("retrieval", tmp_path, [on_disk]))
    assert made is not None
    at = made.columns.index("floor (first 10 / random)")
    (row,) = [r for r in made.rows if r[made.columns.index("gated metric")] == "recall@10"]
    rand = on_disk["floor"]["random"]["metrics"]["recall@10"]["value"]
    assert row[at] == f"0.667 / {rand:.3f}"
    lift = on_disk["metrics"]["recall@10"]["value"] - max(2 / 3, rand)
    assert row[at + 1] == f"{lift:+.3f}"


def test_bm25_ranks_the_whole_screen(screen_root: Path) -> None:
    """Before: only element 7 (the one sharing a word with `tap search`) was returned."""
    result = ui_run(screen_root)
    by_id = {p.sample_id: p.answer["results"] for p in result.predictions}
    assert all(len(results) == N_ELEMENTS for results in by_id.values())
    ranked = by_id["hand-2"]
    assert ranked[0]["region"]["bbox"] == box(7) and ranked[0]["score"] > 0
    assert [r["region"]["bbox"] for r in ranked[1:]] == [
        box(i) for i in range(N_ELEMENTS) if i != 7]
    assert all(r["score"] == 0.0 for r in ranked[1:])
    only_matches = ui_run(screen_root, full_ranking=False)
    assert {len(p.answer["results"]) for p in only_matches.predictions} == {0, 1}
