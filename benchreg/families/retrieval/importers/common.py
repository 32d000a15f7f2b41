"""What every importer shares: its command line, the staging folder, the manifest merge, the
move into place and the printed counts.

An import is built in a temp folder shaped like a data root: beside the root when the root does
not exist yet (`<parent>/.<root>.import-<source>.tmp/`), else inside it
(`<root>/.import-<source>.tmp/`), so that every move is a rename on one file system. It holds
the importer's corpus folder `corpus/<modality>/<source>/`, its set file `sets/<source>.jsonl`
and the new `corpus/manifest.jsonl` (this importer's rows, `"importer": "<source>"`, in place
of its old ones; every other row kept). placement.py puts it in place, all or nothing: one
rename for a new root; for an existing one a rename per path, all undone if one fails.

The manifest is canonical: rows written by hand (no `importer`) first as they were, then each
importer's rows in the order it wrote them, importers by name, every row's keys sorted; so the
same sources give the same bytes (and sha256) whatever order they were imported in, and
importing the same upstream files twice changes nothing (no timestamps). A bad source folder,
a corrupt file or a bad option is one located error line on stderr and exit 2, and nothing is
written.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError, at
from benchreg.core.io import confined, read_json
from benchreg.core.reader import json_lines
from benchreg.families.retrieval.importers.placement import Placement, place_new_root

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
    """The temp folder an import is built in (a data root in miniature; see the module doc)."""

    def __init__(self, out: Path, source: str, modality: str) -> None:
        self.out, self.source, self.modality = out, source, modality
        self.new_root = not out.exists()
        self.tmp = (out.parent / f".{out.name}.import-{source}.tmp" if self.new_root
                    else out / f".import-{source}.tmp")
        self.folder = Path(modality) / source  # this importer's folder under corpus/

    def prepare(self) -> None:
        """A fresh temp folder (a left-over of an interrupted import is removed)."""
        if self.tmp.is_symlink():
            self.tmp.unlink()
        elif self.tmp.exists():
            shutil.rmtree(self.tmp)
        (self.tmp / CORPUS / self.folder).mkdir(parents=True)

    def __enter__(self) -> Staging:
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
        """Write the set file and the merged manifest, then put the import in place."""
        old = [] if self.new_root else existing_rows(self.out / CORPUS / MANIFEST)
        rows = canonical_manifest(merge_manifest(old, imported.rows, self.source))
        set_rel, manifest_rel = Path(SETS) / f"{self.source}.jsonl", Path(CORPUS) / MANIFEST
        (self.tmp / SETS).mkdir()
        (self.tmp / set_rel).write_text("".join(dumps(e) + "\n" for e in imported.entries),
                                        "utf-8")
        (self.tmp / manifest_rel).write_text("".join(manifest_line(r) for r in rows), "utf-8")
        if self.new_root:
            place_new_root(self.tmp, self.out)
            return
        moves = [Path(CORPUS) / self.folder, set_rel, manifest_rel]
        Placement(self.tmp / ".previous").place([(self.tmp / m, self.out / m) for m in moves])


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def manifest_line(row: Row) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"


def existing_rows(path: Path) -> list[Row]:
    """The rows of the root's manifest (none if absent). A row that names a file leading
    outside the data root stops the import before anything is written: the new manifest would
    carry it on, and every run refuses such a root."""
    if not path.is_file():
        return []
    corpus = path.parent
    rows = []
    for number, row, _ in json_lines(path):
        where = at(path, number)
        if not isinstance(row, dict):
            raise BenchregError("a manifest row is a JSON object", where=where,
                                fix="fix or remove that line, or import into another root")
        for rel in named_files(row):
            try:
                confined(Path(rel), corpus, what="manifest path")
            except BenchregError as exc:
                raise BenchregError(
                    f"source {row.get('source_id')!r}: {exc.what}; nothing was written",
                    where=where, fix="remove that row (or the link), or import into another root",
                ) from None
        rows.append(row)
    return rows


def named_files(row: Row) -> list[str]:
    """The paths a manifest row names: `path` and each `files[].path`."""
    extra = row.get("files")
    paths = [row.get("path")]
    if isinstance(extra, list):
        paths += [f.get("path") for f in extra if isinstance(f, dict)]
    return [p for p in paths if isinstance(p, str)]


def canonical_manifest(rows: list[Row]) -> list[Row]:
    """Rows written by hand (no `importer`) first, as they were, then every importer's rows in
    the order it wrote them, importers by name (a stable sort): the manifest's bytes depend on
    its rows, not on the order of the imports."""
    by_hand = [r for r in rows if not isinstance(r.get("importer"), str)]
    imported = sorted((r for r in rows if isinstance(r.get("importer"), str)),
                      key=lambda r: str(r["importer"]))
    return by_hand + imported


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


# --- options that select by name -------------------------------------------------------------


def selection(option: str, given: str | None, default: str, available: Iterable[str],
              what: str, where: Path) -> set[str]:
    """The names of a comma-separated option (e.g. `--dev 26,30`). Given on the command line,
    each must be one of ``available`` (the ``what`` found in ``where``), else one error naming
    the option, what it was matched against and the nearest names; left at its default (which
    names the full upstream release), names absent from a partial source are ignored."""
    if given is None:
        return {name.strip() for name in default.split(",") if name.strip()}
    chosen = {name.strip() for name in given.split(",") if name.strip()}
    known = sorted(set(available))
    listing = ", ".join(known[:20]) + (f", ... ({len(known)} in all)" if len(known) > 20 else "")
    if not chosen:
        raise BenchregError(f"selects no {what}", where=option, fix=f"name some of: {listing}")
    unknown = sorted(chosen - set(known))
    if unknown:
        nearest = difflib.get_close_matches(unknown[0], known, n=3, cutoff=0.4)
        hint = f"nearest: {', '.join(nearest)}" if nearest else "no near name"
        raise BenchregError(
            f"{unknown[0]!r} matches none of the {len(known)} {what} of {where} ({hint})",
            where=option, fix=f"name some of: {listing}",
        )
    return chosen


def require_split(imported: Imported, split: str, option: str, given: str | None) -> None:
    """A split chosen on the command line that ends up with no entry is an error (its items
    were all skipped), not an empty split."""
    if given is not None and not any(e["split"] == split for e in imported.entries):
        skipped = sum(imported.skipped.values())
        raise BenchregError(
            f"{given!r} selects no imported entry for the {split} split (every item of it was "
            f"skipped; {skipped} skipped in all)",
            where=option, fix="name values whose items are imported, or see the skip reasons "
            "in the summary of an import without this option",
        )


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
    check_destinations(out, importer)
    root = out.resolve()
    staging = Staging(root, importer.name, importer.modality)
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        staging.prepare()
    except OSError as exc:
        shutil.rmtree(staging.tmp, ignore_errors=True)
        raise BenchregError(f"cannot make the temp folder ({exc.strerror or exc})",
                            where=exc.filename or root,
                            fix="pass --out a folder you can write") from None
    with staging:
        try:
            imported = importer.build(args, staging)
        except BenchregError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, OSError) as exc:
            raise BenchregError(f"unexpected content ({type(exc).__name__}: {exc})",
                                where=args.src) from None
        staging.commit(imported)
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
