"""Reading a manifest source's text into units, the finest regions a chunker can cut.

Text stand-ins per modality (the file named by the manifest row's `path`, under `corpus/`):

| modality | file | units |
|---|---|---|
| pdf | `.txt`, pages separated by form feeds, blocks by blank lines | `{page, block}` |
| image | `.txt` (a caption) or `.jsonl` (`{text, id, hidden_for}` per caption) | `{}` |
| ui_screenshot | `.jsonl`, `{bbox, text}` per view element | `{bbox}` |
| video | `.jsonl`, `{t_start, t_end, text}` per transcript window | `{t_start, t_end}` |
| code | `.json`, `{path: file text}` for the files of one commit | one per line `{path, line}` |
| conversation | `.jsonl`, `{turn, speaker, text}` (+ optional `observed_at`, `holder`) | `{turn}` |

A unit may carry its own `observed_at` and `holder`; otherwise the source's manifest row gives
them. Block and page numbers are 1-based pages, 0-based blocks. A unit may also name the
entries it must be hidden from (`hidden_for`: query ids): a COCO caption is the question of its
own entry, so the image's *other* captions are its text stand-in for that entry.

Every file is found through :func:`benchreg.core.io.confined` before it is opened: a manifest
path that is absolute, holds `..` or follows a link out of the data root is refused unread.
:class:`CorpusView` reads what the resolver needs of a source (code symbols, unit times and
holders) once per run, lazily.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchreg.core.errors import BenchregError, at
from benchreg.core.io import confined, read_text
from benchreg.core.reader import read_records
from benchreg.families.retrieval.codesymbols import Symbol, symbols
from benchreg.families.retrieval.records import ManifestRow

if TYPE_CHECKING:
    from benchreg.families.retrieval.manifest import Manifest


@dataclass(frozen=True, slots=True)
class Unit:
    region: dict[str, Any]
    text: str
    observed_at: str | None = None
    holder: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    hidden_for: tuple[str, ...] = ()  # query ids this unit is hidden from (its own question)


def source_file(row: ManifestRow, corpus_dir: Path) -> Path | None:
    """The confined file of a source (checked before anything opens it); None without one."""
    if row.path is None:
        return None
    return confined(Path(row.path), corpus_dir, what=f"manifest path of {row.source_id!r}")


def read_units(row: ManifestRow, corpus_dir: Path) -> list[Unit]:
    """The units of one source; [] when the source has no file (it cannot be shipped)."""
    path = source_file(row, corpus_dir)
    if path is None:
        return []
    reader = READERS[row.modality]
    return list(reader(path))


def read_code_files(path: Path) -> dict[str, str]:
    """A code source: ``{path in the repository: file text}``."""
    try:
        files = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise BenchregError(f"malformed JSON ({exc.msg})", where=at(path, exc.lineno)) from None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise BenchregError("a code source is a JSON object {path: file text}", where=path)
    return files


class CorpusView:
    """What the resolver reads of the corpus, once per source: the Python symbols of a code
    source's files, and the per-unit times and holders of a conversation source."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self._files: dict[str, dict[str, str] | None] = {}
        self._symbols: dict[tuple[str, str], dict[str, Symbol] | None] = {}
        self._units: dict[str, dict[int, tuple[str | None, str | None]] | None] = {}

    def _code(self, source: str) -> dict[str, str] | None:
        if source not in self._files:
            row = self.manifest.rows.get(source)
            path = source_file(row, self.manifest.corpus_dir) if row is not None else None
            self._files[source] = read_code_files(path) if path is not None else None
        return self._files[source]

    def spans(self, source: str) -> Callable[[str], dict[str, Symbol] | None] | None:
        """``path -> {qualified name: symbol}`` for a code source with files, else None."""
        row = self.manifest.rows.get(source)
        if row is None or row.path is None or row.modality != "code":
            return None

        def of(path: str) -> dict[str, Symbol] | None:
            key = (source, path)
            if key not in self._symbols:
                files = self._code(source) or {}
                text = files.get(path)
                self._symbols[key] = symbols(text) if text is not None else None
            return self._symbols[key]

        return of

    def unit_meta(self, source: str) -> dict[int, tuple[str | None, str | None]] | None:
        """turn -> (observed_at, holder) of a conversation source whose turns carry either;
        None when none does (the manifest row then speaks for every turn)."""
        if source not in self._units:
            row = self.manifest.rows.get(source)
            meta: dict[int, tuple[str | None, str | None]] | None = None
            if row is not None and row.modality == "conversation" and row.path is not None:
                units = read_units(row, self.manifest.corpus_dir)
                if any(u.observed_at or u.holder for u in units):
                    meta = {u.region["turn"]: (u.observed_at, u.holder) for u in units}
            self._units[source] = meta
        return self._units[source]


def _pdf(path: Path) -> Iterator[Unit]:
    for page, page_text in enumerate(read_text(path).split("\f"), start=1):
        blocks = [b.strip() for b in page_text.split("\n\n") if b.strip()]
        for block, text in enumerate(blocks):
            yield Unit({"page": page, "block": block}, text)


def _image(path: Path) -> Iterator[Unit]:
    if path.suffix != ".jsonl":
        yield Unit({}, read_text(path).strip())
        return
    for where, data in _rows(path, ()):
        hidden = data.get("hidden_for") or []
        if not isinstance(hidden, list) or not all(isinstance(h, str) for h in hidden):
            raise BenchregError("`hidden_for` must be a list of query ids", where=where)
        extra = {"id": str(data["id"])} if data.get("id") is not None else {}
        yield Unit({}, str(data["text"]), extra=extra, hidden_for=tuple(hidden))


def _rows(path: Path, keys: tuple[str, ...]) -> Iterator[tuple[str, dict[str, Any]]]:
    for record in read_records(path):
        data = record.data
        if not isinstance(data, dict) or any(k not in data for k in (*keys, "text")):
            raise BenchregError(
                f"a corpus row needs {', '.join((*keys, 'text'))}", where=record.where
            )
        yield record.where, data


def _ui(path: Path) -> Iterator[Unit]:
    for _, data in _rows(path, ("bbox",)):
        yield Unit({"bbox": list(data["bbox"])}, str(data["text"]))


def _video(path: Path) -> Iterator[Unit]:
    for _, data in _rows(path, ("t_start", "t_end")):
        region = {"t_start": float(data["t_start"]), "t_end": float(data["t_end"])}
        yield Unit(region, str(data["text"]))


def _code(path: Path) -> Iterator[Unit]:
    for file_path, text in read_code_files(path).items():
        for line, line_text in enumerate(str(text).splitlines(), start=1):
            yield Unit({"path": file_path, "line": line}, line_text)


def _conversation(path: Path) -> Iterator[Unit]:
    for _, data in _rows(path, ("turn",)):
        speaker = data.get("speaker")
        text = f"{speaker}: {data['text']}" if speaker else str(data["text"])
        yield Unit(
            {"turn": int(data["turn"])},
            text,
            observed_at=data.get("observed_at"),
            holder=data.get("holder"),
        )


READERS = {
    "pdf": _pdf,
    "image": _image,
    "ui_screenshot": _ui,
    "video": _video,
    "code": _code,
    "conversation": _conversation,
}
