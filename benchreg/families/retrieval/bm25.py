"""A BM25 index over atom text (the `bm25s` library), with a visibility mask per query."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from benchreg.core.errors import BenchregError

TOKEN = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str, stopwords: frozenset[str]) -> list[str]:
    return [t for t in TOKEN.findall(text.lower()) if t not in stopwords]


class BM25Index:
    def __init__(self, texts: Sequence[str], *, k1: float = 1.5, b: float = 0.75) -> None:
        try:
            import bm25s
            from bm25s.stopwords import STOPWORDS_EN
        except ImportError:
            raise BenchregError(
                "the retrieval baseline needs the bm25s package",
                fix="pip install 'benchreg[retrieval]'",
            ) from None
        self.stopwords = frozenset(STOPWORDS_EN)
        self.size = len(texts)
        self._bm25 = bm25s.BM25(k1=k1, b=b)
        if texts:
            self._bm25.index([tokenize(t, self.stopwords) for t in texts], show_progress=False)

    def search(
        self, query: str, k: int, visible: np.ndarray | None = None, min_score: float = 0.0
    ) -> list[tuple[int, float]]:
        """Top ``k`` (index, score) with score > ``min_score`` among the visible atoms."""
        terms = tokenize(query, self.stopwords)
        if not self.size or not terms:
            return []  # a query with no term left (punctuation, stopwords) matches nothing
        scores = np.asarray(self._bm25.get_scores(terms), dtype=float)
        if visible is not None:
            scores = np.where(visible, scores, -np.inf)
        order = np.lexsort((np.arange(self.size), -scores))[:k]  # ties: corpus order
        return [(int(i), float(scores[i])) for i in order if scores[i] > min_score]
