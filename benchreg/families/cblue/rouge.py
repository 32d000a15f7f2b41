"""ROUGE-1/2/L F of one (prediction, reference) text pair, the way the official evaluator does it.

Text is split by transformers' BasicTokenizer (lower-cases; every CJK character and punctuation
mark is a token; ASCII words and numbers stay whole), tokens are joined by spaces, and an empty
text becomes `无 。`. rouge_chinese 1.0.3 (default settings) then scores the pair: ROUGE-1/2 over
distinct n-grams, ROUGE-L as the LCS of the token sequences, F = 2PR/(P+R+1e-8).
Both libraries are imported on first use only.
"""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

EMPTY_TEXT = "无 。"


class RougeF(NamedTuple):
    rouge1: float
    rouge2: float
    rougeL: float


@cache
def _tokenizer() -> Any:
    import os

    # transformers advises at import that PyTorch is absent; only its tokenizer is used here
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    from transformers import BasicTokenizer

    return BasicTokenizer(tokenize_chinese_chars=True)


@cache
def _rouge() -> Any:
    from rouge_chinese import Rouge

    return Rouge()


def spaced_tokens(text: str) -> str:
    """The text as the official evaluator hands it to ROUGE."""
    joined = " ".join(_tokenizer().tokenize(text)).strip()
    return joined or EMPTY_TEXT


def rouge_f(prediction: str, reference: str) -> RougeF:
    scores = _rouge().get_scores(spaced_tokens(prediction), spaced_tokens(reference))[0]
    return RougeF(scores["rouge-1"]["f"], scores["rouge-2"]["f"], scores["rouge-l"]["f"])
