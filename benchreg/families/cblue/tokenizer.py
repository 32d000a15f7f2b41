"""The text splitting of the official PromptCBLUE ROUGE scores, without transformers.

`basic_tokenize` gives the tokens of transformers' `BasicTokenizer(tokenize_chinese_chars=True)`
with its other defaults (lower-case, accents stripped, no never-split tokens, split on
punctuation), checked token for token against it in tests/families/cblue/test_cblue_tokenizer.py:

1. drop NUL, U+FFFD and control characters (category C*, except tab, LF and CR); every other
   whitespace (those three, space and category Zs) becomes a space;
2. put spaces around each CJK ideograph (the code-point ranges below);
3. NFC, lower-case, NFD, drop non-spacing marks (category Mn);
4. put spaces around each punctuation mark: category P* and every ASCII symbol;
5. split on whitespace (`str.split`).

BasicTokenizer lower-cases and strips accents token by token; doing it on the whole text gives
the same result because tokens are separated by whitespace, which no normalisation moves or
creates and which ends the context of the one context-dependent lower-case rule (final sigma).
Steps 1-2 and 4 are single `str.translate` passes over per-character tables filled on first use.
"""

from __future__ import annotations

import unicodedata

_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
# ASCII characters other than letters and digits count as punctuation, Unicode class or not
_ASCII_SYMBOL_RANGES = ((33, 47), (58, 64), (91, 96), (123, 126))


def _in_ranges(code: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(low <= code <= high for low, high in ranges)


def _is_punctuation(char: str) -> bool:
    return _in_ranges(ord(char), _ASCII_SYMBOL_RANGES) or unicodedata.category(char)[0] == "P"


class _CleanTable(dict[int, str | None]):
    """Step 1-2 replacement of each code point, for `str.translate`."""

    def __missing__(self, code: int) -> str | None:
        char = chr(code)
        category = unicodedata.category(char)
        value: str | None
        if char in " \t\n\r" or category == "Zs":
            value = " "
        elif code in (0, 0xFFFD) or category[0] == "C":
            value = None
        elif _in_ranges(code, _CJK_RANGES):
            value = f" {char} "
        else:
            value = char
        self[code] = value
        return value


class _SplitTable(dict[int, str | None]):
    """Step 3 (mark removal) and step 4 replacement of each code point, for `str.translate`."""

    def __missing__(self, code: int) -> str | None:
        char = chr(code)
        value: str | None
        if unicodedata.category(char) == "Mn":
            value = None
        elif _is_punctuation(char):
            value = f" {char} "
        else:
            value = char
        self[code] = value
        return value


_CLEAN = _CleanTable()
_SPLIT = _SplitTable()


def basic_tokenize(text: str) -> list[str]:
    """Tokens of `text` as BasicTokenizer(tokenize_chinese_chars=True).tokenize gives them."""
    text = unicodedata.normalize("NFC", text.translate(_CLEAN)).lower()
    return unicodedata.normalize("NFD", text).translate(_SPLIT).split()
