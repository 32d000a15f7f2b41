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


def test_words_skip_the_sentence_split_without_changing_them() -> None:
    """rouge_f takes the tokens as rouge_chinese's flattened sentences: the same lists on texts
    full of sentence marks, quotes, dots, ellipses, line breaks and other odd characters."""
    from benchreg.families.cblue.rouge import _words, words_by_sentences

    rng = random.Random(2)
    odd = [
        *"。！？?.…”’“‘，,!\n\r\t\x0b\x0c\x1c\x1f\x85\u2028\u2029\u3000\ufffd\x00é́ΣσςİK",
        "......",
        "……",
        "。”",
        "？’",
        "!?",
        "Ａ",
        "ﬁ",
        "ß",
        "x",
    ]
    for _ in range(2000):
        text = "".join(rng.choice(odd) for _ in range(rng.randint(0, 30)))
        if rng.random() < 0.2:
            text += "".join(chr(rng.randint(1, 0x2FFFF)) for _ in range(rng.randint(0, 10)))
        assert _words(text) == words_by_sentences(text), repr(text)
    assert _words("") == _words(" \n ") == ["无", "。"] == words_by_sentences("")


def test_rouge_n_f_is_rouge_chinese_formula_float_for_float() -> None:
    from rouge_chinese.rouge_score import f_r_p_rouge_n

    from benchreg.families.cblue.rouge import _rouge_n_f

    for evaluated in range(0, 30):
        for reference in range(0, 30):
            for overlap in range(0, min(evaluated, reference) + 1):
                want = f_r_p_rouge_n(evaluated, reference, overlap)["f"]
                assert _rouge_n_f(evaluated, reference, overlap) == want
