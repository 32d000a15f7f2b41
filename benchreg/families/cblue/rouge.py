"""ROUGE-1/2/L F of one (prediction, reference) text pair, the way the official evaluator does it.

Text is split as transformers' BasicTokenizer splits it (`tokenizer.basic_tokenize`: lower-cases;
every CJK character and punctuation mark is a token; ASCII words and numbers stay whole), tokens
are joined by spaces, and an empty text becomes `无 。`. rouge_chinese 1.0.3 (default settings)
then scores the pair: ROUGE-1/2 over distinct n-grams, ROUGE-L as the LCS of the token sequences,
F = 2PR/(P+R+1e-8). rouge_chinese is imported on first use only.
"""

from __future__ import annotations

from functools import cache
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
    scores = _rouge().get_scores(spaced_tokens(prediction), spaced_tokens(reference))[0]
    return RougeF(scores["rouge-1"]["f"], scores["rouge-2"]["f"], scores["rouge-l"]["f"])
