"""The corpus manifest `corpus/manifest.jsonl`: one row per source, the authority on sources,
datasets, revisions, times and holders. A malformed manifest stops the run (every entry depends
on it).

Confinement comes before reading: the manifest path (`corpus/` may be a link) and every file a
row names are resolved with :func:`benchreg.core.io.confined` first, so a link or a `..` path
that leaves the data root is refused before anything is opened or hashed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from benchreg.core.errors import BenchregError
from benchreg.core.io import confined, sha256_file
from benchreg.core.reader import index_by_id, read_records
from benchreg.families.retrieval.records import ManifestRow
from benchreg.families.retrieval.times import time_problem

MANIFEST = Path("corpus") / "manifest.jsonl"


@dataclass(frozen=True, slots=True)
class Manifest:
    path: Path
    rows: dict[str, ManifestRow]  # source_id -> row
    where: dict[str, str]  # source_id -> file:line
    _revisions: dict[str, frozenset[tuple[str, str]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def corpus_dir(self) -> Path:
        return self.path.parent

    def revisions(self) -> frozenset[tuple[str, str]]:
        """The (dataset, revision) pairs of the rows (computed once: every entry asks)."""
        found = self._revisions.get("all")
        if found is None:
            found = frozenset((row.dataset, row.revision) for row in self.rows.values())
            self._revisions["all"] = found
        return found

    def with_corpus(self) -> frozenset[tuple[str, str]]:
        """The (modality, dataset) pairs of the rows that name a corpus file (`path`): how a
        modality's corpus is keyed to the sources of each dataset (computed once)."""
        found = self._revisions.get("corpus")
        if found is None:
            found = frozenset(
                (row.modality, row.dataset) for row in self.rows.values() if row.path is not None
            )
            self._revisions["corpus"] = found
        return found


def manifest_path(data_root: Path) -> Path:
    """`corpus/manifest.jsonl`, confined to the data root (before anything reads it)."""
    return confined(MANIFEST, data_root, what="corpus manifest")


def read_manifest(data_root: Path) -> Manifest:
    path = manifest_path(data_root)
    if not path.is_file():
        raise BenchregError(
            "corpus manifest not found",
            where=path,
            fix="a retrieval data root holds sets/*.jsonl and corpus/manifest.jsonl",
        )
    records = index_by_id(read_records(path), "source_id", what="manifest row")
    rows: dict[str, ManifestRow] = {}
    for source_id, record in records.items():
        try:
            row = ManifestRow.model_validate(record.data)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(p) for p in error["loc"]) or "row"
            raise BenchregError(f"{field}: {error['msg']}", where=record.where) from None
        if row.observed_at is not None and (problem := time_problem(row.observed_at)):
            raise BenchregError(f"observed_at: {problem}", where=record.where)
        rows[source_id] = row
    return Manifest(path, rows, {sid: r.where for sid, r in records.items()})


def row_files(row: ManifestRow) -> list[tuple[str, str | None]]:
    """(path, sha256) of every file a row names: its `path` and the extra `files` (e.g. the
    original PDF or image beside the extracted text)."""
    out: list[tuple[str, str | None]] = []
    if row.path is not None:
        out.append((row.path, row.sha256))
    for extra in (row.model_extra or {}).get("files") or []:
        if isinstance(extra, dict) and isinstance(extra.get("path"), str):
            sha = extra.get("sha256")
            out.append((extra["path"], sha if isinstance(sha, str) else None))
    return out


def sha256_problems(manifest: Manifest) -> list[tuple[str, str]]:
    """``(where, problem)`` for every manifest file that leads outside the data root (refused
    unread), is absent, or whose sha256 differs."""
    problems = []
    for source_id, row in manifest.rows.items():
        where = manifest.where[source_id]
        for rel, expected in row_files(row):
            try:
                file = confined(Path(rel), manifest.corpus_dir, what="manifest path")
            except BenchregError as exc:
                problems.append((where, f"source {source_id!r}: {exc.what}; not read"))
                continue
            if not file.is_file():
                problems.append((where, f"source {source_id!r}: file {rel} not found"))
            elif expected is None:
                problems.append((where, f"source {source_id!r}: no sha256 for {rel}"))
            elif (actual := sha256_file(file)) != expected:
                problems.append(
                    (
                        where,
                        f"source {source_id!r}: sha256 of {rel} is {actual}, "
                        f"manifest says {expected}",
                    )
                )
    return problems
