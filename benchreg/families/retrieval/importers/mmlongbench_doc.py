"""`mmlongbench_doc`: MMLongBench-Doc questions over the PDFs present (pdf/SOURCE.md).

- One entry per question of `data/samples.json` whose document is in `data/documents/`:
  `mmlb-<0-based index in samples.json>`; question verbatim; scope.session = the document (a
  question about "this report" is about one document), scenario = `doc_type`.
- Answers typed by `answer_format`: Int -> int, Float -> float (a trailing `%` dropped, as
  upstream's scorer reads it; counted), List -> `ast.literal_eval`, Str -> str; an answer that
  does not parse as its format is kept as text with answer_format `str` (counted).
  `Not answerable` -> unanswerable (answer null, gold []; pages listed anyway are ignored).
- Gold: one `{page}` per evidence page (1-based), repeats removed (counted). Answerable
  questions whose evidence pages are empty or hold page 0 are skipped (counted).
- Split: per `doc_type` the first document by file name -> dev, the others -> test; no document
  is in both.
- No time and no holder (the documents have neither; an ingest time would be a constant that
  makes temporal correctness trivial, so `as_of` stays null).
- Corpus: each PDF's text extracted with pypdf (pdftext.py) into
  `corpus/pdf/mmlongbench_doc/<doc_id>.txt`; the row records the extractor and its version,
  the page count, the pages without a text layer and the PDF's sha256 (`--copy-pdfs` also
  copies the PDF, listed under `files`). Each PDF's page text is kept in the benchreg cache
  dir by the PDF's sha256 and the pypdf version (pdftext.py): importing the same PDFs again
  reads it back and writes the same bytes (`--no-text-cache` extracts every PDF again).
"""

from __future__ import annotations

import argparse
import ast
import os
from collections import Counter
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.annotations import MMLB
from benchreg.families.retrieval.importers.common import (
    Imported,
    Importer,
    Origin,
    Staging,
    dedupe,
    entry,
    field_of,
    load_json,
    need_dir,
    need_file,
    source_row,
)
from benchreg.families.retrieval.importers.pdftext import (
    PdfText,
    cache_folder,
    extract_all,
    extractor,
)

NAME = "mmlongbench_doc"
ORIGIN = Origin("MMLongBench-Doc", "d73f0dc0be7e0a2ff6a403d5fe65fcd96461f384", "CC BY-NC 4.0",
                MMLB.name)
FORMATS = {"Str": "str", "Int": "int", "Float": "float", "List": "list", "None": "none"}
NOT_ANSWERABLE = "Not answerable"


def typed_answer(raw: Any, fmt: str, notes: Counter[str]) -> tuple[Any, str]:
    """(answer, answer_format) typed by the upstream format; text when it does not parse."""
    text = str(raw).strip()
    try:
        if fmt == "int":
            return int(text), "int"
        if fmt == "float":
            if text.endswith("%"):
                notes["Float answers with a trailing % (dropped: '21%' -> 21.0)"] += 1
                text = text[:-1].strip()
            return float(text), "float"
        if fmt == "list":
            value = ast.literal_eval(text)
            if isinstance(value, list | tuple):
                return list(value), "list"
            raise ValueError(text)
    except (ValueError, SyntaxError):
        notes[f"answers not readable as their answer_format ({fmt}), kept as str"] += 1
        return str(raw), "str"
    return str(raw), "str"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1),
                        help="processes extracting PDF text (default: min(4, CPUs))")
    parser.add_argument("--copy-pdfs", action="store_true",
                        help="also copy each PDF into the corpus (listed under `files`)")
    parser.add_argument("--no-text-cache", action="store_true",
                        help="extract every PDF's text again (default: PDFs with the same "
                        "sha256 and pypdf version read back from the benchreg cache dir)")


def build(args: argparse.Namespace, staging: Staging) -> Imported:
    src: Path = args.src
    samples_path = need_file(src, "data/samples.json", "the MMLongBench-Doc repository folder "
                             "with data/samples.json and data/documents/")
    docs_dir = need_dir(src, "data/documents", "the PDFs of MMLongBench-Doc")
    samples = load_json(samples_path)
    if not isinstance(samples, list):
        raise BenchregError("samples.json must be a JSON list", where=samples_path)
    documents = sorted(p.name for p in docs_dir.glob("*.pdf"))
    if not documents:
        raise BenchregError("no PDF in data/documents", where=docs_dir)
    present = set(documents)
    imported = Imported()
    tool = extractor()
    dev_docs = _dev_documents(samples, present, samples_path)
    texts = extract_all([docs_dir / d for d in documents], jobs=max(1, args.jobs),
                        cache=not args.no_text_cache)
    rows = _source_rows(args, staging, docs_dir, documents, texts, tool)
    empty_pages = {doc: set(text.empty_pages) for doc, text in zip(documents, texts, strict=True)}
    gold_pages_without_text = 0
    for i, s in enumerate(samples):
        if s["doc_id"] in present:
            gold_pages_without_text += _add_entry(
                imported, i, s, f"{samples_path}: item {i}", empty_pages, dev_docs
            )
    imported.rows = list(rows.values())
    total_pages = sum(r["pages"] for r in imported.rows)
    without = sum(r["pages_without_text"] for r in imported.rows)
    imported.lines += [
        f"text: {tool}; {total_pages} pages, {without} without a text layer; "
        f"{gold_pages_without_text} gold pages among them",
        f"dev documents (one per doc_type): {', '.join(sorted(dev_docs))}",
        f"text cache: {sum(t.cached for t in texts)} of {len(texts)} PDFs read back"
        + (f" ({folder})" if (folder := cache_folder()) and not args.no_text_cache
           else " (off)"),
    ]
    return imported


def _dev_documents(samples: list[Any], present: set[str], samples_path: Path) -> set[str]:
    """Per doc_type the first document by name (every item names its document and type)."""
    for i, s in enumerate(samples):
        where = f"{samples_path}: item {i}"
        if field_of(s, "doc_id", where, str) in present:
            field_of(s, "doc_type", where, str)
    first_of_type: dict[str, str] = {}
    for s in sorted((s for s in samples if s["doc_id"] in present), key=lambda s: s["doc_id"]):
        first_of_type.setdefault(s["doc_type"], s["doc_id"])
    return set(first_of_type.values())


def _source_rows(
    args: argparse.Namespace,
    staging: Staging,
    docs_dir: Path,
    documents: list[str],
    texts: list[PdfText],
    tool: str,
) -> dict[str, dict[str, Any]]:
    """The manifest row of each document, its text written (and the PDF copied with
    ``--copy-pdfs``)."""
    rows: dict[str, dict[str, Any]] = {}
    for doc, text in zip(documents, texts, strict=True):
        pdf = docs_dir / doc
        files = None
        if args.copy_pdfs:
            rel, sha = staging.copy(pdf, f"pdfs/{doc}")
            files = [{"path": rel, "sha256": sha, "role": "original PDF"}]
        rows[doc] = source_row(
            doc, "pdf", ORIGIN, NAME, path=staging.write_text(f"{doc}.txt", text.text()),
            text_extractor=tool, pages=len(text.pages),
            pages_without_text=len(text.empty_pages),
            extracted_from={"file": f"data/documents/{doc}", "sha256": text.sha256},
            files=files,
        )
    return rows


def _add_entry(
    imported: Imported,
    i: int,
    s: dict[str, Any],
    where: str,
    empty_pages: dict[str, set[int]],
    dev_docs: set[str],
) -> int:
    """The entry of item ``i`` added (or the item counted as skipped); the number of its gold
    pages without a text layer."""
    doc = s["doc_id"]
    question = field_of(s, "question", where, str)
    raw = field_of(s, "answer", where)
    fmt = FORMATS.get(field_of(s, "answer_format", where, str))
    if fmt is None:
        raise BenchregError(f"unknown answer_format {s['answer_format']!r}", where=where)
    try:
        pages = ast.literal_eval(field_of(s, "evidence_pages", where, str))
    except (ValueError, SyntaxError):
        raise BenchregError("evidence_pages is not a list literal", where=where) from None
    gold: list[dict[str, Any]] = []
    without_text = 0
    if raw == NOT_ANSWERABLE:
        if pages:
            imported.notes["evidence pages of Not-answerable questions ignored"] += 1
        answer, answer_format = None, "none"
    else:
        if not pages:
            imported.skipped["answerable without evidence pages"] += 1
            return 0
        if any(not isinstance(p, int) or p < 1 for p in pages):
            imported.skipped["answerable with an evidence page < 1 (page 0)"] += 1
            return 0
        gold = dedupe([{"source_id": doc, "region": {"page": p}} for p in pages],
                      imported.notes, "repeated gold pages removed")
        without_text = sum(1 for g in gold if g["region"]["page"] in empty_pages[doc])
        answer, answer_format = typed_answer(raw, fmt, imported.notes)
    imported.entries.append(entry(
        f"mmlb-{i}", "pdf", question, answer, answer_format, gold, ORIGIN, f"{i}:{doc}",
        "dev" if doc in dev_docs else "test", session=doc, scenario=s["doc_type"]))
    return without_text


IMPORTER = Importer(
    NAME, "pdf", "Import MMLongBench-Doc (questions over the PDFs present, page gold).",
    add_arguments, build,
    src_help="the MMLongBench-Doc folder with data/samples.json and data/documents/*.pdf "
    "(e.g. ../shared/data/retrieval/pdf/mmlongbench-doc)",
)
