"""`tokenize` and `BM25Index` (bm25s, Lucene's BM25): scores computed by hand, the visibility
mask, `k`, `min_score`, ties in corpus order, and the error without bm25s."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.bm25 import BM25Index, tokenize

pytest.importorskip("bm25s", reason="the retrieval baseline needs bm25s (pip install bm25s)")

DOCS = ["apple banana", "banana cherry", "cherry date"]
# Lucene BM25 for "banana": idf = ln(1 + (N - df + 0.5) / (df + 0.5)), N = 3, df = 2; both
# documents have tf = 1 and length = average length, so tf / (tf + k1) = 1 / 2.5
BANANA = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5)) / (1 + 1.5)


def test_tokenize_lowercases_splits_on_non_word_and_drops_stopwords() -> None:
    tokens = tokenize("The Quick, brown fox's 2 foxes!", frozenset({"the"}))
    assert tokens == ["quick", "brown", "fox", "s", "2", "foxes"]
    assert tokenize("Ünïcode wörds", frozenset()) == ["ünïcode", "wörds"]
    assert tokenize("?!", frozenset()) == []


def test_scores_by_hand_and_ties_in_corpus_order() -> None:
    found = BM25Index(DOCS).search("banana", 10)
    assert [i for i, _ in found] == [0, 1]  # doc 2 shares no term: score 0 is not > 0
    assert [s for _, s in found] == pytest.approx([BANANA, BANANA], rel=1e-6)


def test_a_rarer_term_and_two_terms() -> None:
    index = BM25Index(DOCS)
    (top,) = index.search("apple", 10)
    assert top == (0, pytest.approx(math.log(1 + 2.5 / 1.5) / 2.5, rel=1e-6))
    found = index.search("apple banana", 10)
    assert found[0] == (0, pytest.approx(BANANA + math.log(1 + 2.5 / 1.5) / 2.5, rel=1e-6))
    assert found[1] == (1, pytest.approx(BANANA, rel=1e-6))


def test_k_limits_the_results() -> None:
    assert [i for i, _ in BM25Index(DOCS).search("banana cherry", 1)] == [1]


def test_the_visibility_mask_hides_atoms() -> None:
    visible = np.array([False, True, True])
    assert [i for i, _ in BM25Index(DOCS).search("banana", 10, visible)] == [1]
    assert BM25Index(DOCS).search("banana", 10, np.zeros(3, dtype=bool)) == []


def test_min_score() -> None:
    index = BM25Index(DOCS)
    assert index.search("banana", 10, min_score=BANANA * 0.99) != []
    assert index.search("banana", 10, min_score=BANANA * 1.01) == []


def test_k1_and_b_reach_bm25s() -> None:
    # k1 = 0 leaves only idf; longer documents lose nothing then
    (top, *_) = BM25Index(["banana", "banana x y z", "q"], k1=0.0).search("banana", 10)
    assert top[1] == pytest.approx(math.log(1 + 1.5 / 2.5), rel=1e-6)


def test_an_empty_index_finds_nothing() -> None:
    index = BM25Index([])
    assert index.size == 0
    assert index.search("banana", 10) == []


def test_stopwords_are_english() -> None:
    index = BM25Index(DOCS)
    assert {"the", "and", "of"} <= index.stopwords
    assert "banana" not in index.stopwords


@pytest.mark.parametrize("query", ["", "?", "the of and"])
def test_a_query_without_terms_finds_nothing(query: str) -> None:
    assert BM25Index(DOCS).search(query, 10) == []


def test_without_bm25s_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bm25s", None)
    monkeypatch.setitem(sys.modules, "bm25s.stopwords", None)
    with pytest.raises(BenchregError) as info:
        BM25Index(DOCS)
    assert info.value.what == "the retrieval baseline needs the bm25s package"
    assert info.value.fix == "pip install 'benchreg[retrieval]'"
