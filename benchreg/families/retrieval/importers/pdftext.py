"""PDF text at import time, with pypdf (`pip install 'benchreg[retrieval-import]'`).

Each page's text is pypdf's plain extraction (`PageObject.extract_text()`, reading order); the
page's blocks are its runs of lines between blank lines (a page without one is one block). Form
feeds inside the text become spaces, so the stored text (`corpus.py`: pages separated by form
feeds, blocks by blank lines) keeps exactly one part per page. A page whose extraction is empty
(a scanned page) has no text layer: it is kept, empty, and counted.

Extraction is pypdf's pure-Python content-stream parser and text-operator interpreter (nearly
all of an import's time: docs/retrieval.md, "Import speed"); each PDF is opened and parsed once,
all its pages in one pass, the PDFs spread over ``jobs`` processes (each with the objects it
inherits frozen out of the cyclic GC: `gc.freeze()`). What pypdf returned for each page is kept
in the benchreg cache dir (``$BENCHREG_CACHE_DIR``, else ``$XDG_CACHE_HOME/benchreg``, else
``~/.cache/benchreg``) under ``pdftext/``, one JSON file per (PDF sha256, pypdf version):
importing the same PDF again with the same pypdf reads those pages back instead of parsing the
PDF, and writes the same bytes (the blocks are made from the cached page text by the same code).
``BENCHREG_DATA_CACHE=off`` or ``cache=False`` turns it off; an entry that cannot be read or
does not match is extracted again; a cache that cannot be written is skipped silently (it is an
optimisation only).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchreg.core.errors import BenchregError
from benchreg.core.load import cache_dir, cache_enabled
from benchreg.families.retrieval.importers.common import sha256_of

BLANK = re.compile(r"\n[ \t]*\n+")
CACHE_FORMAT = "pypdf extract_text() per page, v1"  # change when what is cached changes


@dataclass(frozen=True, slots=True)
class PdfText:
    pages: tuple[tuple[str, ...], ...]  # per page, its blocks
    sha256: str = ""  # of the PDF's bytes the text was extracted from
    cached: bool = False  # read back from the text cache

    @property
    def empty_pages(self) -> list[int]:
        """1-based numbers of the pages without a text layer."""
        return [i for i, blocks in enumerate(self.pages, start=1) if not blocks]

    def text(self) -> str:
        return "\f".join("\n\n".join(blocks) for blocks in self.pages)


def extractor() -> str:
    """`pypdf <version>`, or a located error naming the extra to install."""
    try:
        import pypdf
    except ImportError:
        raise BenchregError(
            "importing PDFs needs the pypdf package",
            fix="pip install 'benchreg[retrieval-import]'",
        ) from None
    return f"pypdf {pypdf.__version__}"


def blocks_of(page_text: str) -> tuple[str, ...]:
    text = page_text.replace("\f", " ").replace("\r\n", "\n").replace("\r", "\n")
    out = []
    for block in BLANK.split(text):
        lines = [line.rstrip() for line in block.split("\n")]
        joined = "\n".join(line for line in lines if line.strip())
        if joined.strip():
            out.append(joined)
    return tuple(out)


def page_texts(path: Path) -> tuple[str, list[str]]:
    """(sha256 of the PDF, pypdf's text of each page): the file read once, parsed once."""
    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # "Ignoring wrong pointing object"
    data = Path(path).read_bytes()
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))  # what PdfReader(path) itself reads
        pages = [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:  # pypdf raises many kinds on a damaged file
        raise BenchregError(
            f"cannot read the PDF ({type(exc).__name__}: {exc})", where=path
        ) from None
    return hashlib.sha256(data).hexdigest(), pages


def extract(path: Path) -> PdfText:
    sha, pages = page_texts(path)
    return PdfText(tuple(blocks_of(p) for p in pages), sha)


# --- the text cache ---------------------------------------------------------------------------


def cache_folder() -> Path | None:
    """The folder of the text cache, or None when caches are turned off."""
    return cache_dir() / "pdftext" if cache_enabled() else None


def _entry(folder: Path, sha: str, tool: str) -> Path:
    key = hashlib.sha256(f"{CACHE_FORMAT}\0{tool}\0{sha}".encode()).hexdigest()
    return folder / key[:2] / f"{key}.json"


def cached_pages(folder: Path, sha: str, tool: str) -> list[str] | None:
    """The cached page texts of the PDF with this sha256, or None (absent, unreadable, or not
    exactly what this extractor stores)."""
    try:
        record = json.loads(_entry(folder, sha, tool).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    pages = record.get("pages") if isinstance(record, dict) else None
    if (
        record.get("pdf_sha256") != sha
        or record.get("extractor") != tool
        or record.get("format") != CACHE_FORMAT
        or not isinstance(pages, list)
        or not all(isinstance(p, str) for p in pages)
    ):
        return None
    return pages


def store_pages(folder: Path, sha: str, tool: str, pages: list[str]) -> None:
    """Keep the page texts (best effort: temp file renamed into place, errors ignored)."""
    path = _entry(folder, sha, tool)
    record = {"format": CACHE_FORMAT, "extractor": tool, "pdf_sha256": sha, "pages": pages}
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(record, handle, ensure_ascii=False)
            os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """The objects alive now left out of the cyclic GC's passes while pypdf allocates its many
    short-lived objects (each pass would otherwise walk every object benchreg, numpy and Hydra
    hold); the worker processes freeze what they inherit the same way."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def extract_all(paths: Sequence[Path], jobs: int = 1, *, cache: bool = True) -> list[PdfText]:
    """Every PDF's text, in order; the PDFs not in the text cache parsed in ``jobs`` processes
    (one PDF per task, each opened once)."""
    tool = extractor()
    folder = cache_folder() if cache else None
    found: dict[int, PdfText] = {}
    if folder is not None:
        for i, path in enumerate(paths):
            sha = sha256_of(path)
            pages = cached_pages(folder, sha, tool)
            if pages is not None:
                found[i] = PdfText(tuple(blocks_of(p) for p in pages), sha, cached=True)
    missing = [p for i, p in enumerate(paths) if i not in found]
    if jobs <= 1 or len(missing) <= 1:
        with frozen_heap():
            parsed = [page_texts(p) for p in missing]
    else:
        workers = min(jobs, len(missing))
        with ProcessPoolExecutor(max_workers=workers, initializer=gc.freeze) as pool:
            parsed = list(pool.map(page_texts, missing))
    fresh = iter(parsed)
    out = []
    for i in range(len(paths)):
        if i in found:
            out.append(found[i])
            continue
        sha, pages = next(fresh)
        if folder is not None:
            store_pages(folder, sha, tool, pages)
        out.append(PdfText(tuple(blocks_of(p) for p in pages), sha))
    return out
