"""benchreg's ROUGE-L LCS against rouge_chinese 1.0.3's own table, pair by pair."""

from __future__ import annotations

import random

from benchreg.families.cblue.rouge import lcs_length, rouge_f, spaced_tokens


def test_lcs_length_equals_rouge_chinese_table() -> None:
    from rouge_chinese.rouge_score import _len_lcs

    rng = random.Random(0)
    for _ in range(500):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 40))]
        b = [rng.choice("abcde") for _ in range(rng.randint(0, 40))]
        assert lcs_length(a, b) == _len_lcs(a, b)


def test_rouge_f_equals_rouge_chinese_get_scores() -> None:
    from rouge_chinese import Rouge

    rouge = Rouge()
    rng = random.Random(1)
    alphabet = [*"我的头疼发烧咳嗽。！？?…，”’ab1 2.", "hello", "  ", "......", "。”"]
    for _ in range(400):
        pred = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        gold = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        scores = rouge.get_scores(spaced_tokens(pred), spaced_tokens(gold))[0]
        want = (scores["rouge-1"]["f"], scores["rouge-2"]["f"], scores["rouge-l"]["f"])
        assert tuple(rouge_f(pred, gold)) == want  # the same floats, not approximately
