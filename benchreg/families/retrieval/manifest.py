"""The corpus manifest `corpus/manifest.jsonl`: one row per source, the authority on sources,
datasets and revisions. A malformed manifest stops the run (every entry depends on it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from benchreg.core.errors import BenchregError
from benchreg.core.io import sha256_file
from benchreg.core.reader import index_by_id, read_records
from benchreg.families.retrieval.records import ManifestRow
from benchreg.families.retrieval.times import time_problem

MANIFEST = Path("corpus") / "manifest.jsonl"


@dataclass(frozen=True, slots=True)
class Manifest:
    path: Path
    rows: dict[str, ManifestRow]  # source_id -> row
    where: dict[str, str]  # source_id -> file:line

    @property
    def corpus_dir(self) -> Path:
        return self.path.parent

    def revisions(self) -> set[tuple[str, str]]:
        return {(row.dataset, row.revision) for row in self.rows.values()}


def read_manifest(data_root: Path) -> Manifest:
    path = data_root / MANIFEST
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


def sha256_problems(manifest: Manifest) -> list[tuple[str, str]]:
    """``(where, problem)`` for every manifest file that is absent or whose sha256 differs."""
    problems = []
    for source_id, row in manifest.rows.items():
        if row.path is None:
            continue
        file = manifest.corpus_dir / row.path
        where = manifest.where[source_id]
        if not file.is_file():
            problems.append((where, f"source {source_id!r}: file {row.path} not found"))
        elif row.sha256 is None:
            problems.append((where, f"source {source_id!r}: no sha256 for {row.path}"))
        elif (actual := sha256_file(file)) != row.sha256:
            problems.append(
                (where, f"source {source_id!r}: sha256 of {row.path} is {actual}, "
                        f"manifest says {row.sha256}")
            )
    return problems
