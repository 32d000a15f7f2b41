"""PDF text at import time, with pypdf (`pip install 'benchreg[retrieval-import]'`).

Each page's text is pypdf's plain extraction (`PageObject.extract_text()`, reading order); the
page's blocks are its runs of lines between blank lines (a page without one is one block). Form
feeds inside the text become spaces, so the stored text (`corpus.py`: pages separated by form
feeds, blocks by blank lines) keeps exactly one part per page. A page whose extraction is empty
(a scanned page) has no text layer: it is kept, empty, and counted.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchreg.core.errors import BenchregError

BLANK = re.compile(r"\n[ \t]*\n+")


@dataclass(frozen=True, slots=True)
class PdfText:
    pages: tuple[tuple[str, ...], ...]  # per page, its blocks

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


def extract(path: Path) -> PdfText:
    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # "Ignoring wrong pointing object"
    try:
        reader = pypdf.PdfReader(path)
        pages = tuple(blocks_of(page.extract_text() or "") for page in reader.pages)
    except Exception as exc:  # pypdf raises many kinds on a damaged file
        raise BenchregError(f"cannot read the PDF ({type(exc).__name__}: {exc})",
                            where=path) from None
    return PdfText(pages)


def extract_all(paths: Sequence[Path], jobs: int = 1) -> list[PdfText]:
    """Every PDF's text, in order; with ``jobs`` > 1 in that many processes."""
    extractor()
    if jobs <= 1 or len(paths) <= 1:
        return [extract(p) for p in paths]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(extract, paths))
