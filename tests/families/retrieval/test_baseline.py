"""The `bm25` baseline on a tiny data root written here: the atoms it builds (only the task's
modality), the holder / as_of visibility, and the predictions it returns."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.system import SystemContext
from benchreg.core.task import load_task
from benchreg.core.types import Sample
from benchreg.families.retrieval.baseline import _visibility, build_atoms, make_bm25
from benchreg.families.retrieval.chunkers import Atom

pytest.importorskip("bm25s", reason="the retrieval baseline needs bm25s (pip install bm25s)")

JAN, MAR = "2024-01-10T09:00:00+00:00", "2024-03-10T09:00:00+00:00"
FILES = {
    "pdf/a.txt": "lighthouse lens restoration\fbakery apprentices",
    "pdf/b.txt": "lighthouse keeper salary",
    "conversation/c.jsonl": json.dumps({"turn": 0, "text": "lighthouse lens"}) + "\n",
}


def source(source_id: str, modality: str, path: str, holder: str, observed: str) -> dict[str, Any]:
    return {"source_id": source_id, "modality": modality, "path": path, "dataset": "d",
            "revision": "r", "license": "CC0-1.0", "annotation_source": "hand-written",
            "observed_at": observed, "holder": holder}


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    for name, text in FILES.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(text, "utf-8")
    rows = [source("a", "pdf", "pdf/a.txt", "alice", JAN),
            source("b", "pdf", "pdf/b.txt", "bob", MAR),
            source("c", "conversation", "conversation/c.jsonl", "alice", JAN)]
    for r in rows:
        r["sha256"] = hashlib.sha256((corpus / r["path"]).read_bytes()).hexdigest()
    (corpus / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return tmp_path


@pytest.fixture
def ctx(data_root: Path) -> SystemContext:
    return SystemContext(task=load_task("retrieval/pdf"), view="dev", data_root=data_root,
                         samples=[])


def query(question: str, holder: str | None = None, as_of: str | None = None,
          session: str | None = None, qid: str = "q1") -> Sample:
    return Sample(qid, {"question": question}, [],
                  {"modality": "pdf", "holder": holder, "as_of": as_of, "session": session})


def atom(holder: str | None, observed: str | None) -> Atom:
    return Atom("x#", "x", {}, "text", observed, holder)


def test_the_baseline_is_registered() -> None:
    assert registry.baselines.get("bm25") is make_bm25


def test_atoms_of_the_task_modality_only(ctx: SystemContext) -> None:
    atoms = build_atoms(ctx, "default")
    assert [(a.atom_id, a.text, a.holder, a.observed_at) for a in atoms] == [
        ("a#page=1", "lighthouse lens restoration", "alice", JAN),
        ("a#page=2", "bakery apprentices", "alice", JAN),
        ("b#page=1", "lighthouse keeper salary", "bob", MAR),
    ]


def test_atoms_with_a_window_chunker(ctx: SystemContext) -> None:
    atoms = build_atoms(ctx, "window", size=2, stride=None)
    assert [a.region for a in atoms] == [{"page_start": 1, "page_end": 2},
                                         {"page_start": 1, "page_end": 1}]


@pytest.mark.parametrize(
    ("holder", "as_of", "filters", "expected"),
    [
        (None, None, (True, True), [True, True, True, True]),
        ("alice", None, (True, True), [True, False, True, True]),
        ("alice", None, (False, True), [True, True, True, True]),
        (None, "2024-02-01T00:00:00+00:00", (True, True), [True, True, False, True]),
        (None, "2024-03-10T09:00:00+00:00", (True, True), [True, True, True, True]),  # at as_of
        (None, "2024-02-01T00:00:00+00:00", (True, False), [True, True, True, True]),
        ("bob", "2024-02-01T00:00:00+00:00", (True, True), [False, True, False, True]),
    ],
)
def test_visibility(holder: str | None, as_of: str | None, filters: tuple[bool, bool],
                    expected: list[bool]) -> None:
    atoms = [atom("alice", JAN), atom("bob", JAN), atom(None, MAR), atom(None, None)]
    visible = _visibility(atoms, query("q", holder, as_of), *filters)
    assert visible.dtype == np.bool_
    assert visible.tolist() == expected


def test_predictions_rank_the_visible_atoms(ctx: SystemContext) -> None:
    answer = make_bm25(ctx)
    prediction = answer(query("lighthouse lens"))
    results = prediction.answer["results"]
    assert [r["atom_id"] for r in results] == ["a#page=1", "b#page=1"]  # page 2: no shared term
    assert results[0] == {"source_id": "a", "region": {"page": 1}, "score": results[0]["score"],
                          "observed_at": JAN, "holder": "alice", "atom_id": "a#page=1"}
    assert results[0]["score"] > results[1]["score"] > 0
    assert prediction.sample_id == "q1"
    assert {k: prediction.metadata[k] for k in ("chunker", "atoms", "scope")} == {
        "chunker": "default", "atoms": 3, "scope": "all"}
    assert prediction.metadata["score_bound"] > results[0]["score"]
    assert prediction.answer["latency_s"] == prediction.latency_s >= 0


def test_the_filters_drop_foreign_and_future_atoms(ctx: SystemContext) -> None:
    answer = make_bm25(ctx)
    held = answer(query("lighthouse", holder="alice")).answer["results"]
    assert [r["source_id"] for r in held] == ["a"]
    past = answer(query("lighthouse", as_of="2024-02-01T00:00:00+00:00")).answer["results"]
    assert [r["source_id"] for r in past] == ["a"]
    leaky = make_bm25(ctx, filter_holder=False, filter_as_of=False)
    assert len(leaky(query("lighthouse", holder="alice")).answer["results"]) == 2


def test_k_and_min_score(ctx: SystemContext) -> None:
    assert len(make_bm25(ctx, k=1)(query("lighthouse lens")).answer["results"]) == 1
    assert make_bm25(ctx, min_score=100.0)(query("lighthouse")).answer["results"] == []


def test_a_question_of_stopwords_only_gets_no_results(ctx: SystemContext) -> None:
    assert make_bm25(ctx)(query("Is it there?")).answer["results"] == []


def test_the_same_visibility_from_the_index_arrays() -> None:
    atoms = [atom("alice", JAN), atom("bob", JAN), atom(None, MAR), atom(None, None)]
    from benchreg.families.retrieval.baseline import ScopedIndex

    index = ScopedIndex(atoms)
    for holder in (None, "alice", "bob", "carol"):
        for as_of in (None, "2024-02-01T00:00:00+00:00"):
            sample = query("q", holder, as_of)
            assert index.visible(sample, True, True).tolist() == _visibility(
                atoms, sample, True, True).tolist()


def test_a_scoped_query_is_answered_from_its_source_alone(ctx: SystemContext) -> None:
    answer = make_bm25(ctx)
    scoped = answer(query("lighthouse", session="b"))
    assert [r["source_id"] for r in scoped.answer["results"]] == ["b"]
    assert scoped.metadata["scope"] == "b"
    unscoped = make_bm25(ctx, honour_scope=False)(query("lighthouse", session="b"))
    assert {r["source_id"] for r in unscoped.answer["results"]} == {"a", "b"}


def test_min_relevance_makes_the_baseline_abstain(ctx: SystemContext) -> None:
    assert make_bm25(ctx, min_relevance=0.0)(query("lighthouse lens")).answer["results"]
    assert make_bm25(ctx, min_relevance=0.99)(query("lighthouse lens")).answer["results"] == []


def test_an_atom_hidden_from_a_query_is_never_returned(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus" / "image"
    corpus.mkdir(parents=True)
    (corpus / "x.jsonl").write_text(
        json.dumps({"id": 1, "text": "a red bus", "hidden_for": ["cap-1"]}) + "\n"
        + json.dumps({"id": 2, "text": "a bus on a road", "hidden_for": ["cap-2"]}) + "\n",
        "utf-8")
    row = source("x", "image", "image/x.jsonl", "alice", JAN)
    (tmp_path / "corpus" / "manifest.jsonl").write_text(json.dumps(row) + "\n", "utf-8")
    ctx = SystemContext(task=load_task("retrieval/image"), view="dev", data_root=tmp_path,
                        samples=[])
    answer = make_bm25(ctx)
    own = answer(query("a red bus", qid="cap-1")).answer["results"]
    assert [r["atom_id"] for r in own] == ["x#id=2"]  # its own caption is hidden from it
    assert [r["atom_id"] for r in answer(query("a red bus", qid="other")).answer["results"]] == [
        "x#id=1", "x#id=2"]


def test_a_modality_without_corpus_stops_with_one_line(data_root: Path) -> None:
    rows = [source("v", "video", "x", "alice", JAN)]
    rows[0]["path"] = None
    (data_root / "corpus" / "manifest.jsonl").write_text(json.dumps(rows[0]) + "\n", "utf-8")
    ctx = SystemContext(task=load_task("retrieval/video"), view="dev", data_root=data_root,
                        samples=[])
    with pytest.raises(BenchregError) as info:
        make_bm25(ctx)
    assert "none of the 1 video sources of this data root has a text corpus" in info.value.what
    assert "model=predictions" in info.value.what
