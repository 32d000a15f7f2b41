"""`codesearchnet`: CodeSearchNet expert relevance judgments (code/SOURCE.md, secondary).

- One entry per (query, language) pair of `resources/annotationStore.csv`:
  `codesearchnet-<language, lower case>-<0-based index of the query in queries.csv>`; the query
  verbatim as question; answer null; scenario = the language.
- Gold: each judged function with relevance >= `--min-relevance` (2; 3 for the strict reading)
  in any of its judgments -> `{source_id: <owner>/<repo>@<sha>, region: {path, line: a}}`, a =
  the function's first line (`#L<a>-L<b>` of its URL); repeats removed (counted).
- Unanswerable: a pair whose judgments are all 0 (no relevant code in the judged pool; only
  relative to that pool). A pair with judgments of 1 at most is neither and is skipped (counted).
- Sources: one per judged `<owner>/<repo>@<sha>`, without a corpus (the functions are spread
  over 2,258 repositories; no snippet text here): the BM25 baseline cannot run on it.
- Split: none upstream; queries whose index is a multiple of 5 -> dev, the others -> test.
- No time, no holder. Score it alone: `loader_params.sets=[codesearchnet]` (the loader refuses
  to mix it with SWE-bench Lite in one code run).
"""

from __future__ import annotations

import argparse
import csv
import re
from collections import defaultdict

from benchreg.core.errors import BenchregError, at
from benchreg.families.retrieval.annotations import CODESEARCHNET
from benchreg.families.retrieval.importers.common import (
    Imported,
    Importer,
    Origin,
    Row,
    Staging,
    dedupe,
    entry,
    need_file,
    source_row,
)

NAME = "codesearchnet"
ORIGIN = Origin("CodeSearchNet", "106e827405c968597da938f6b373d30183918869",
                "MIT (CodeSearchNet); code under each repository's licence", CODESEARCHNET.name)
URL = re.compile(r"https://github\.com/([^/]+)/([^/]+)/blob/([0-9a-f]{40})/(.+)#L(\d+)-L(\d+)")
COLUMNS = ("Language", "Query", "GitHubUrl", "Relevance")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--min-relevance", type=int, choices=(1, 2, 3), default=2,
                        help="the least relevance that makes a function gold (default 2)")


def _read_csv(path: str) -> list[tuple[str, dict[str, str]]]:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            return [(at(path, reader.line_num), row) for row in reader]
    except (UnicodeDecodeError, csv.Error) as exc:
        raise BenchregError(f"not a readable CSV file ({exc})", where=path) from None


def build(args: argparse.Namespace, staging: Staging) -> Imported:
    store = need_file(args.src, "resources/annotationStore.csv", "the CodeSearchNet folder")
    queries_path = need_file(args.src, "resources/queries.csv", "the CodeSearchNet folder")
    queries = [row.get("query", "") for _, row in _read_csv(str(queries_path))]
    index = {q: i for i, q in enumerate(queries)}
    pairs: dict[tuple[str, str], list[tuple[int, Row, str]]] = defaultdict(list)
    sources: dict[str, Row] = {}
    for where, row in _read_csv(str(store)):
        if any(row.get(c) is None for c in COLUMNS):
            raise BenchregError(f"a row needs the columns {', '.join(COLUMNS)}", where=where)
        match = URL.fullmatch(row["GitHubUrl"].strip())
        if match is None:
            raise BenchregError(f"unexpected GitHubUrl {row['GitHubUrl']!r}", where=where)
        if row["Query"] not in index:
            raise BenchregError(f"query {row['Query']!r} is not in queries.csv", where=where)
        try:
            relevance = int(row["Relevance"])
        except ValueError:
            raise BenchregError(f"Relevance {row['Relevance']!r} is not a number",
                                where=where) from None
        owner, repo, sha, path, start = match[1], match[2], match[3], match[4], int(match[5])
        source_id = f"{owner}/{repo}@{sha}"
        sources.setdefault(source_id, source_row(source_id, "code", ORIGIN, NAME,
                                                 repo=f"{owner}/{repo}", commit=sha))
        gold = {"source_id": source_id, "region": {"path": path, "line": start}}
        pairs[(row["Query"], row["Language"])].append((relevance, gold, where))
    imported = Imported()
    for (query, language), judged in sorted(pairs.items(), key=lambda kv: (
            index[kv[0][0]], kv[0][1])):
        gold = [g for r, g, _ in judged if r >= args.min_relevance]
        if not gold and any(r > 0 for r, _, _ in judged):
            imported.skipped[f"pair without a judgment >= {args.min_relevance} and not all 0"] += 1
            continue
        gold = dedupe(gold, imported.notes, "functions judged more than once (one gold region)")
        i = index[query]
        imported.entries.append(entry(
            f"{NAME}-{language.lower()}-{i}", "code", query, None, "none", gold, ORIGIN,
            f"{language}:{query}", "dev" if i % 5 == 0 else "test", scenario=language))
    imported.rows = list(sources.values())
    imported.lines.append("corpus: none (functions spread over many repositories): the BM25 "
                          "baseline cannot run; score your own system's predictions")
    return imported


IMPORTER = Importer(
    NAME, "code", "Import CodeSearchNet expert relevance judgments (query -> function).",
    add_arguments, build,
    src_help="the CodeSearchNet folder with resources/annotationStore.csv and "
    "resources/queries.csv (e.g. ../shared/data/retrieval/code/codesearchnet)",
)
