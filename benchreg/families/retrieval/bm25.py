"""A BM25 index over atom text (the `bm25s` library), with a visibility mask per query.

Scores are bm25s's (Lucene variant): score(q, d) = sum over the query's terms t of
idf(t) * tf / (tf + k1 (1 - b + b |d| / avgdl)), idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)).
Each term's part is below idf(t), so the *relevance* of a result, score / sum_t idf(t) (the
query's terms found in the index), lies in [0, 1): the share of the best score the query could
reach in this index. Unlike the raw score it does not grow with the query's length or the
corpus size, so one abstention threshold (`min_relevance`) can serve corpora of any size.
"""

from __future__ import annotations

import math
import re
from collections import Counter
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
        tokens = [tokenize(t, self.stopwords) for t in texts]
        df = Counter(t for doc in tokens for t in set(doc))
        n = len(tokens)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self._empty = not df
        if texts and not self._empty:
            self._bm25.index(tokens, show_progress=False)

    def bound(self, terms: Sequence[str]) -> float:
        """The score no atom can reach for these query terms: sum of their idf."""
        return sum(self.idf.get(t, 0.0) for t in terms)

    def search(
        self,
        query: str,
        k: int,
        visible: np.ndarray | None = None,
        min_score: float = 0.0,
        min_relevance: float = 0.0,
    ) -> list[tuple[int, float]]:
        """Top ``k`` (index, score) among the visible atoms with score > ``min_score`` and
        relevance (score / :meth:`bound`) > ``min_relevance``."""
        terms = tokenize(query, self.stopwords)
        if not self.size or not terms or self._empty:
            return []  # a query with no term left (punctuation, stopwords) matches nothing
        scores = np.asarray(self._bm25.get_scores(terms), dtype=float)
        if visible is not None:
            scores = np.where(visible, scores, -np.inf)
        order = np.lexsort((np.arange(self.size), -scores))[:k]  # ties: corpus order
        floor = max(min_score, min_relevance * self.bound(terms))
        return [
            (int(i), float(scores[i])) for i in order if scores[i] > min_score and scores[i] > floor
        ]
