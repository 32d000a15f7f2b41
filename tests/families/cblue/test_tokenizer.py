"""`basic_tokenize` gives exactly the tokens of transformers' BasicTokenizer (a dev dependency).

Compared on every string in the PromptCBLUE data (../shared, read in place), on every code point
and on seeded random strings that mix the character classes the tokenizer treats differently.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchreg.families.cblue.rouge import EMPTY_TEXT, spaced_tokens
from benchreg.families.cblue.tokenizer import basic_tokenize

N_RANDOM = 5000
SEED = 20240123


@pytest.fixture(scope="module")
def reference() -> Callable[[str], list[str]]:
    try:
        os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
        from transformers import BasicTokenizer
    except ImportError:
        reason = "transformers is not installed (it is in the dev extra: pip install -e '.[dev]')"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI must install it")
        pytest.skip(reason)
    tokenizer = BasicTokenizer(tokenize_chinese_chars=True)
    return tokenizer.tokenize


def assert_same_tokens(texts: list[str], reference: Callable[[str], list[str]]) -> None:
    mismatches = [t for t in texts if basic_tokenize(t) != reference(t)]
    assert not mismatches, [(t, basic_tokenize(t), reference(t)) for t in mismatches[:5]] + [
        f"{len(mismatches)} of {len(texts)} differ"
    ]


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def read_json_or_lines(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_same_tokens_on_every_promptcblue_text(
    raw: Path, reference: Callable[[str], list[str]]
) -> None:
    files = sorted(raw.glob("*.json"))
    texts = [
        s for path in files for document in read_json_or_lines(path) for s in strings_in(document)
    ]
    rows = [row for path in files for row in read_json_or_lines(path) if "input" in row]
    assert rows, f"no JSON-lines rows with `input` under {raw}"
    assert len(texts) > 2 * len(rows)
    assert_same_tokens(texts, reference)


@pytest.mark.parametrize("between", ["", "x"])
def test_same_tokens_on_every_code_point(
    between: str, reference: Callable[[str], list[str]]
) -> None:
    """Every code point in runs of 64 neighbours (marks meet bases), or each between two `x`."""
    texts = [
        between + "".join(chr(c) + between for c in range(start, start + 64))
        for start in range(0, 0x110000, 64)
    ]
    assert_same_tokens(texts, reference)


POOLS: list[tuple[int, int]] = [
    (0x20, 0x7E),  # ASCII printable
    (0x61, 0x7A),  # more ASCII letters, so words form
    (0x30, 0x39),  # digits
    (0x00, 0x1F),  # C0 controls incl. NUL, tab, LF, CR, U+001C-001F
    (0x7F, 0xA0),  # DEL, C1 controls incl. U+0085, no-break space
    (0xC0, 0x17F),  # accented Latin
    (0x300, 0x36F),  # combining marks
    (0x370, 0x3FF),  # Greek (final sigma)
    (0x2000, 0x206F),  # general punctuation, spaces, zero-width and bidi controls
    (0x3000, 0x303F),  # CJK symbols and punctuation, ideographic space
    (0x3040, 0x30FF),  # kana (not split per character)
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3),  # Hangul syllables
    (0xD800, 0xDFFF),  # lone surrogates
    (0xF900, 0xFAFF),  # CJK compatibility ideographs (NFC changes them)
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFF00, 0xFFEF),  # full-width and half-width forms
    (0xFFF0, 0xFFFF),  # specials incl. U+FFFD
    (0x1F300, 0x1FAFF),  # emoji
    (0x20000, 0x2FA1F),  # CJK extensions B-F, compatibility supplement
    (0x0, 0x10FFFF),  # anything
]
SPECIAL = [" ", "\t", "\n", "\r", "\u200d", "\u00a0", "\u2028", "\u2029", "\ufeff", "İ", "Σ"]


def random_text(rng: random.Random) -> str:
    chars = []
    for _ in range(rng.randint(0, 40)):
        if rng.random() < 0.15:
            chars.append(rng.choice(SPECIAL))
        else:
            low, high = rng.choice(POOLS)
            chars.append(chr(rng.randint(low, high)))
    return "".join(chars)


def test_same_tokens_on_seeded_random_strings(reference: Callable[[str], list[str]]) -> None:
    rng = random.Random(SEED)
    texts = [random_text(rng) for _ in range(N_RANDOM)]
    assert_same_tokens(texts, reference)


def test_spaced_tokens_examples() -> None:
    assert (
        spaced_tokens("患者：头痛3天, Fever 38.5°C！") == "患 者 ： 头 痛 3 天 , fever 38 . 5°c ！"
    )
    assert spaced_tokens("Café naïve ÉTÉ") == "cafe naive ete"
    assert spaced_tokens(" \x00\ufffd\t") == EMPTY_TEXT
    assert spaced_tokens("") == EMPTY_TEXT
