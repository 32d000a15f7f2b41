"""Reading a manifest source's text into units, the finest regions a chunker can cut.

Text stand-ins per modality (the file named by the manifest row's `path`, under `corpus/`):

| modality | file | units |
|---|---|---|
| pdf | `.txt`, pages separated by form feeds, blocks by blank lines | `{page, block}` |
| image | `.txt`, a caption | `{}` |
| ui_screenshot | `.jsonl`, `{bbox, text}` per view element | `{bbox}` |
| video | `.jsonl`, `{t_start, t_end, text}` per transcript window | `{t_start, t_end}` |
| code | `.json`, `{path: file text}` for the files of one commit | one per line `{path, line}` |
| conversation | `.jsonl`, `{turn, speaker, text}` (+ optional `observed_at`, `holder`) | `{turn}` |

A unit may carry its own `observed_at` and `holder`; otherwise the source's manifest row gives
them. Block and page numbers are 1-based pages, 0-based blocks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError, at
from benchreg.core.io import confined, read_text
from benchreg.core.reader import read_records
from benchreg.families.retrieval.records import ManifestRow


@dataclass(frozen=True, slots=True)
class Unit:
    region: dict[str, Any]
    text: str
    observed_at: str | None = None
    holder: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def read_units(row: ManifestRow, corpus_dir: Path) -> list[Unit]:
    """The units of one source; [] when the source has no file (it cannot be shipped)."""
    if row.path is None:
        return []
    path = confined(Path(row.path), corpus_dir, what="manifest path")
    reader = READERS[row.modality]
    return list(reader(path))


def _pdf(path: Path) -> Iterator[Unit]:
    for page, page_text in enumerate(read_text(path).split("\f"), start=1):
        blocks = [b.strip() for b in page_text.split("\n\n") if b.strip()]
        for block, text in enumerate(blocks):
            yield Unit({"page": page, "block": block}, text)


def _image(path: Path) -> Iterator[Unit]:
    yield Unit({}, read_text(path).strip())


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
    try:
        files = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise BenchregError(f"malformed JSON ({exc.msg})", where=at(path, exc.lineno)) from None
    if not isinstance(files, dict):
        raise BenchregError("a code source is a JSON object {path: file text}", where=path)
    for file_path, text in files.items():
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
