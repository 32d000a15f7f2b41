"""What every importer shares: its command line, the staging folder, the manifest merge, the
move into place and the printed counts.

An import is built in a temp folder inside the data root (`<out>/.import-<source>.tmp/`, so
that every move is a rename on one file system) and moved into place only when complete:

1. the importer's corpus folder `corpus/<modality>/<source>/` replaces the old one (renamed
   aside first, put back if a later step fails);
2. `sets/<source>.jsonl` replaces the old set file;
3. `corpus/manifest.jsonl` is rewritten with this importer's rows (`"importer": "<source>"`)
   in place of its old ones, every other row kept as it was, in order.

A failure before step 1 leaves the root untouched; importing the same upstream files twice
writes the same bytes (rows and entries in upstream order, no timestamps), so it changes
nothing. A bad source folder or a corrupt file is one located error line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError, at
from benchreg.core.io import read_json
from benchreg.core.reader import json_lines

Row = dict[str, Any]
SETS, CORPUS, MANIFEST = "sets", "corpus", "manifest.jsonl"


@dataclass(frozen=True, slots=True)
class Origin:
    dataset: str
    revision: str
    license: str
    annotation_source: str


@dataclass
class Imported:
    """What an importer built: manifest rows, entries and its counts."""

    rows: list[Row] = field(default_factory=list)
    entries: list[Row] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> items not imported
    notes: Counter[str] = field(default_factory=Counter)  # what was changed on the way
    lines: list[str] = field(default_factory=list)  # further lines for the summary


class Staging:
    """The temp folder an import is built in, inside the data root."""

    def __init__(self, out: Path, source: str, modality: str) -> None:
        self.out, self.source, self.modality = out, source, modality
        self.tmp = out / f".import-{source}.tmp"
        self.folder = Path(modality) / source  # this importer's folder under corpus/

    def __enter__(self) -> Staging:
        if self.tmp.exists():
            shutil.rmtree(self.tmp)
        (self.tmp / CORPUS / self.folder).mkdir(parents=True)
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, rel: str) -> Path:
        """A corpus file of this import (``rel`` under its folder), created with its parents."""
        target = self.tmp / CORPUS / self.folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def write_text(self, rel: str, text: str) -> tuple[str, str]:
        """Write a corpus file; (path relative to corpus/, sha256)."""
        data = text.encode("utf-8")
        self.path(rel).write_bytes(data)
        return str(self.folder / rel), hashlib.sha256(data).hexdigest()

    def write_jsonl(self, rel: str, rows: Iterable[Row]) -> tuple[str, str]:
        return self.write_text(rel, "".join(dumps(r) + "\n" for r in rows))

    def copy(self, src: Path, rel: str) -> tuple[str, str]:
        shutil.copyfile(src, self.path(rel))
        return str(self.folder / rel), sha256_of(src)

    def commit(self, imported: Imported) -> None:
        """Move the built import into place (corpus folder, set file, manifest)."""
        corpus = self.out / CORPUS
        new_manifest = merge_manifest(_read_rows(corpus / MANIFEST), imported.rows, self.source)
        set_tmp = self.tmp / f"{self.source}.jsonl"
        set_tmp.write_text("".join(dumps(e) + "\n" for e in imported.entries), "utf-8")
        manifest_tmp = self.tmp / MANIFEST
        manifest_tmp.write_text("".join(dumps(r) + "\n" for r in new_manifest), "utf-8")
        target, aside = corpus / self.folder, self.tmp / "previous"
        target.parent.mkdir(parents=True, exist_ok=True)
        (self.out / SETS).mkdir(parents=True, exist_ok=True)
        moved_aside = False
        try:
            if target.exists():
                os.replace(target, aside)
                moved_aside = True
            os.replace(self.tmp / CORPUS / self.folder, target)
            os.replace(set_tmp, self.out / SETS / f"{self.source}.jsonl")
            os.replace(manifest_tmp, corpus / MANIFEST)
        except BaseException:
            if moved_aside:
                if target.exists():
                    shutil.rmtree(target)
                os.replace(aside, target)
            raise


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_rows(path: Path) -> list[Row]:
    if not path.is_file():
        return []
    return [row for _, row, _ in json_lines(path)]


def merge_manifest(existing: list[Row], mine: list[Row], source: str) -> list[Row]:
    """The manifest with ``mine`` in place of this importer's old rows (at the first of them,
    else at the end); rows of other importers (or written by hand) stay as they were. A row of
    another importer with one of my source ids is an error (two importers, one id)."""
    ids = {r["source_id"] for r in mine}
    out: list[Row] = []
    placed = False
    for row in existing:
        if row.get("importer") == source:
            if not placed:
                out += mine
                placed = True
            continue
        if row.get("source_id") in ids:
            raise BenchregError(
                f"source id {row['source_id']!r} is already in the manifest, from "
                f"{row.get('importer') or 'another source'}",
                fix="import into another data root, or remove that row first",
            )
        out.append(row)
    return out if placed else out + mine


# --- reading upstream files with located errors -------------------------------------------


def need_file(folder: Path, rel: str, what: str) -> Path:
    path = folder / rel
    if not path.is_file():
        raise BenchregError(f"not found: {rel} (expected {what})", where=folder)
    return path


def need_dir(folder: Path, rel: str, what: str) -> Path:
    path = folder / rel
    if not path.is_dir():
        raise BenchregError(f"not found: {rel}/ (expected {what})", where=folder)
    return path


def load_json(path: Path) -> Any:
    return read_json(path)


def load_jsonl(path: Path) -> list[tuple[str, Any]]:
    return [(at(path, number), obj) for number, obj, _ in json_lines(path)]


def field_of(obj: Any, key: str, where: str, types: type | tuple[type, ...] = object) -> Any:
    """``obj[key]``, or a located error naming the missing or mistyped field."""
    if not isinstance(obj, dict) or key not in obj:
        raise BenchregError(f"missing field {key!r}", where=where)
    value = obj[key]
    if not isinstance(value, types):
        raise BenchregError(f"field {key!r} has the wrong type ({type(value).__name__})",
                            where=where)
    return value


# --- entries ---------------------------------------------------------------------------------


def entry(qid: str, modality: str, question: str, answer: Any, answer_format: str,
          gold: list[Row], origin: Origin, item: str, split: str, *,
          as_of: str | None = None, holder: str | None = None, session: str | None = None,
          scenario: str | None = None) -> Row:
    unanswerable = not gold
    return {
        "query_id": qid, "modality": modality, "question": question,
        "answer": None if unanswerable else answer,
        "answer_format": "none" if unanswerable else answer_format,
        "gold": gold,
        "scope": {"holder": holder, "session": session, "scenario": scenario},
        "as_of": as_of, "unanswerable": unanswerable,
        "origin": {"dataset": origin.dataset, "revision": origin.revision, "item": item,
                   "license": origin.license},
        "split": split,
    }


def source_row(source_id: str, modality: str, origin: Origin, importer: str, *,
               path: tuple[str, str] | None = None, **extra: Any) -> Row:
    row: Row = {"source_id": source_id, "modality": modality,
                "path": path[0] if path else None, "sha256": path[1] if path else None,
                "dataset": origin.dataset, "revision": origin.revision,
                "license": origin.license, "annotation_source": origin.annotation_source}
    row.update({k: v for k, v in extra.items() if v is not None})
    row["importer"] = importer
    return row


def dedupe(gold: list[Row], notes: Counter[str], what: str) -> list[Row]:
    out: list[Row] = []
    for item in gold:
        if item in out:
            notes[what] += 1
        else:
            out.append(item)
    return out


# --- the command line ------------------------------------------------------------------------


Build = Callable[[argparse.Namespace, Staging], Imported]


@dataclass(frozen=True)
class Importer:
    name: str
    modality: str
    summary: str  # one line: what it imports
    add_arguments: Callable[[argparse.ArgumentParser], None]
    build: Build
    src_help: str

    def parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(
            prog=f"python -m benchreg import {self.name}",
            description=f"{self.summary} Writes sets/{self.name}.jsonl and this source's rows "
            "of corpus/manifest.jsonl under the data root (a temp folder first, moved into "
            "place when complete; importing twice changes nothing). See docs/retrieval.md.",
        )
        parser.add_argument("--src", required=True, type=Path, help=self.src_help)
        parser.add_argument("--out", required=True, type=Path,
                            help="the data root to write (created if absent)")
        self.add_arguments(parser)
        return parser

    def __call__(self, argv: Sequence[str]) -> int:
        parser = self.parser()
        try:
            args = parser.parse_args(list(argv))
        except SystemExit as exc:  # --help (0) or a usage error (2), printed by argparse
            return int(exc.code or 0)
        tic = time.perf_counter()
        try:
            if not args.src.is_dir():
                raise BenchregError("source folder not found", where=args.src,
                                    fix=self.src_help)
            imported = run(self, args)
        except BenchregError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 2
        print(summary(self.name, args.out, imported, time.perf_counter() - tic))
        return 0


def run(importer: Importer, args: argparse.Namespace) -> Imported:
    out: Path = args.out
    if out.exists() and not out.is_dir():
        raise BenchregError("the data root is not a folder", where=out)
    created = not out.exists()
    check_destinations(out, importer)
    out.mkdir(parents=True, exist_ok=True)
    try:
        with Staging(out.resolve(), importer.name, importer.modality) as staging:
            try:
                imported = importer.build(args, staging)
            except BenchregError:
                raise
            except (KeyError, TypeError, ValueError, IndexError, OSError) as exc:
                raise BenchregError(f"unexpected content ({type(exc).__name__}: {exc})",
                                    where=args.src) from None
            staging.commit(imported)
    except BaseException:
        if created and not any(out.iterdir()):
            out.rmdir()  # as it was: absent
        raise
    return imported


def check_destinations(out: Path, importer: Importer) -> None:
    """Every path the import writes (the temp folder, `sets/`, its set file, `corpus/`, the
    manifest, its corpus folder) must stay inside the data root once links are followed: a run
    refuses a root whose files lead outside it, so an import never writes through such a link."""
    root = out.resolve()
    folder = Path(CORPUS) / importer.modality / importer.name
    for rel in (Path(f".import-{importer.name}.tmp"), Path(SETS),
                Path(SETS) / f"{importer.name}.jsonl", Path(CORPUS), Path(CORPUS) / MANIFEST,
                folder.parent, folder):
        if not (out / rel).resolve().is_relative_to(root):
            raise BenchregError(
                f"{rel} leads outside the data root {root} (a link); nothing was written",
                where=out / rel,
                fix="replace the link by a folder (or file) inside the data root, or import "
                "into another root",
            )


def summary(name: str, out: Path, imported: Imported, seconds: float) -> str:
    entries = imported.entries
    n = len(entries)
    splits = Counter(e["split"] for e in entries)
    unanswerable = sum(1 for e in entries if e["unanswerable"])
    share = f"{unanswerable / n:.1%}" if n else "n/a"
    lines = [
        f"imported {name}: {n} entries -> {out / SETS / (name + '.jsonl')}; "
        f"{len(imported.rows)} sources -> {out / CORPUS / MANIFEST} ({seconds:.1f} s)",
        "  entries per split: " + (", ".join(f"{k} {v}" for k, v in sorted(splits.items()))
                                   or "none"),
        f"  unanswerable: {unanswerable} of {n} ({share})",
        f"  with as_of: {sum(1 for e in entries if e['as_of'] is not None)}; "
        f"with a holder: {sum(1 for e in entries if e['scope']['holder'] is not None)}; "
        f"scoped to one item: {sum(1 for e in entries if e['scope']['session'] is not None)}",
        f"  sources with a corpus file: {sum(1 for r in imported.rows if r.get('path'))} "
        f"of {len(imported.rows)}",
        f"  skipped items: {sum(imported.skipped.values())}"
        + ("".join(f"\n    {reason}: {k}" for reason, k in sorted(imported.skipped.items()))),
    ]
    if imported.notes:
        lines.append("  changed on the way:" + "".join(
            f"\n    {what}: {k}" for what, k in sorted(imported.notes.items())))
    lines += [f"  {line}" for line in imported.lines]
    return "\n".join(lines)
