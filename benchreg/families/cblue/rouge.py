"""ROUGE-1/2/L F of one (prediction, reference) text pair, the way the official evaluator does it.

Text is split as transformers' BasicTokenizer splits it (`tokenizer.basic_tokenize`: lower-cases;
every CJK character and punctuation mark is a token; ASCII words and numbers stay whole), tokens
are joined by spaces, and an empty text becomes `无 。`. rouge_chinese 1.0.3 (default settings)
then scores the pair: ROUGE-1/2 over distinct n-grams, ROUGE-L as the LCS of the token sequences,
F = 2PR/(P+R+1e-8). rouge_chinese is imported on first use only.

The F formula is rouge_chinese's own (`f_r_p_rouge_n`, restated operation for operation); its
sentence split is skipped (on spaced tokens it gives the tokens back, see `_words`), and its
n-gram sets and LCS length are computed here the same way but faster: n-grams as plain sets, the
LCS bit-parallel
(Allison-Dix / Hyyro: one big-integer step per token instead of a Python dict cell per token
pair; 40% of scoring 80,000 PromptCBLUE samples went to rouge_chinese's O(n*m) table). The same
counts give the same floats (tests/families/cblue/test_rouge.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import pairwise
from typing import Any, NamedTuple

from benchreg.families.cblue.tokenizer import basic_tokenize

EMPTY_TEXT = "无 。"


class RougeF(NamedTuple):
    rouge1: float
    rouge2: float
    rougeL: float


@cache
def _rouge() -> Any:
    from rouge_chinese import Rouge

    return Rouge()


def spaced_tokens(text: str) -> str:
    """The text as the official evaluator hands it to ROUGE."""
    return " ".join(basic_tokenize(text)) or EMPTY_TEXT


def rouge_f(prediction: str, reference: str) -> RougeF:
    """``Rouge().get_scores(hyp, ref)[0]`` of rouge_chinese 1.0.3, its three F values."""
    hyp_words = _words(prediction)
    ref_words = _words(reference)
    # rouge_n (exclusive): distinct n-grams of the flattened word lists
    hyp_1, ref_1 = set(hyp_words), set(ref_words)
    hyp_2, ref_2 = set(pairwise(hyp_words)), set(pairwise(ref_words))
    # rouge_l_summary_level: LCS of the flattened word lists
    llcs = lcs_length(ref_words, hyp_words)
    r_lcs, p_lcs = llcs / len(ref_words), llcs / len(hyp_words)
    return RougeF(
        _rouge_n_f(len(hyp_1), len(ref_1), len(hyp_1 & ref_1)),
        _rouge_n_f(len(hyp_2), len(ref_2), len(hyp_2 & ref_2)),
        2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8)),
    )


def _rouge_n_f(evaluated_count: int, reference_count: int, overlapping_count: int) -> float:
    """``rouge_chinese.rouge_score.f_r_p_rouge_n(...)["f"]``, the same operations in the same
    order (so the same float), without building its dict for every pair."""
    precision = overlapping_count / evaluated_count if evaluated_count else 0.0
    recall = overlapping_count / reference_count if reference_count else 0.0
    return 2.0 * ((precision * recall) / (precision + recall + 1e-8))


def _words(text: str) -> list[str]:
    """The words rouge_chinese scores for ``spaced_tokens(text)``: its sentences (`cut_sent`, then
    each sentence's words re-joined by single spaces) flattened back into one word list.

    That is the token list itself, so the sentence split is skipped: the text is the tokens
    joined by single spaces, no token holds whitespace, and every character `cut_sent`'s patterns
    look at (`。！？?.…”’`) is punctuation, hence a token of its own. So only its first pattern can
    match, always as "mark, space" between two tokens: the newline it inserts cuts the text
    between tokens, and each piece is its tokens again (never blank: a space is always followed
    by a token). `words_by_sentences` is the literal computation (tests/families/cblue/
    test_rouge.py checks they agree)."""
    return basic_tokenize(text) or EMPTY_TEXT.split(" ")


def words_by_sentences(text: str) -> list[str]:
    """The flattened words of rouge_chinese's sentences of ``spaced_tokens(text)``, computed
    literally (`Rouge.cut_sent`, as `Rouge._get_scores` does)."""
    sentences = [" ".join(part.split()) for part in _rouge().cut_sent(spaced_tokens(text)) if part]
    if not sentences:
        raise ValueError("empty text")
    return [w for sentence in sentences for w in sentence.split(" ")]


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences (bit-parallel)."""
    masks: dict[str, int] = {}
    for i, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full  # bit i is 0 where the LCS of a[:i+1] and b[:j] gained a token
    for token in b:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()
