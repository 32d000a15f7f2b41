"""Benchmark: `basic_tokenize` against transformers' BasicTokenizer on the PromptCBLUE texts.

Run by hand: `python bench/cblue_tokenizer.py [--repeats 5]` (needs the dev extra for
transformers, and ../shared/data/promptcblue/raw, read in place). Tokenizes every `input` and
`target` of the JSON-lines files, checks the token lists are equal, and prints the best wall time
of each implementation over the repeats, characters per second and the speed-up.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchreg.families.cblue.tokenizer import basic_tokenize

RAW = Path(__file__).resolve().parents[2] / "shared" / "data" / "promptcblue" / "raw"


def texts_of(raw: Path) -> list[str]:
    texts = []
    for path in sorted(raw.glob("*.json")):
        lines = path.read_text(encoding="utf-8").splitlines()
        if not lines or not lines[0].lstrip().startswith('{"'):
            continue  # plain JSON documents, not JSON lines
        for line in lines:
            row = json.loads(line)
            texts += [row["input"], row["target"]]
    return texts


def best_time(tokenize: Callable[[str], list[str]], texts: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        tic = time.perf_counter()
        for text in texts:
            tokenize(text)
        times.append(time.perf_counter() - tic)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--raw", type=Path, default=RAW)
    args = parser.parse_args()
    texts = texts_of(args.raw)
    if not texts:
        print(f"no PromptCBLUE JSON-lines files under {args.raw}", file=sys.stderr)
        return 1
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    from transformers import BasicTokenizer

    reference = BasicTokenizer(tokenize_chinese_chars=True).tokenize
    differ = sum(basic_tokenize(t) != reference(t) for t in texts)
    chars = sum(map(len, texts))
    ours = best_time(basic_tokenize, texts, args.repeats)
    theirs = best_time(reference, texts, args.repeats)
    print(f"{len(texts)} texts, {chars} characters, {differ} token lists differ")
    for name, seconds in (("basic_tokenize", ours), ("transformers", theirs)):
        print(f"{name:>15}: {seconds * 1e3:8.2f} ms  {chars / seconds / 1e6:6.2f} M chars/s")
    print(f"speed-up: {theirs / ours:.1f}x")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
