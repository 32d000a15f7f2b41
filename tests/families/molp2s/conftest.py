"""A tiny hand-written MolP2S release, built per test, for loader and scoring rules."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchreg.core.types import Sample

CANDIDATES = ["c1ccccc1CO", "c1ccccc1CN", "c1ccccc1CC", "c1ccccc1CC(=O)O"]

# one record as a Sample, for parser and prompt tests
SAMPLE = Sample(
    id="r0",
    input={
        "record_id": "r0",
        "masked_smiles": "c1ccccc1C[*]",
        "mask": {"token": "[*]"},
        "properties": {"gap": {"value": 6.5, "unit": "eV"}},
        "candidate_completed_smiles": ["c1ccccc1CO", "c1ccccc1CN"],
    },
    gold=0,
)


def record(rid: str, **over: Any) -> dict[str, Any]:
    base = {
        "record_id": rid,
        "masked_smiles": "c1ccccc1C[*]",
        "mask": {"token": "[*]", "attachment_points": 1},
        "properties": {"gap": {"value": 6.5, "unit": "eV", "values": "illustrative"}},
        "candidate_completed_smiles": list(CANDIDATES),
    }
    base.update(over)
    return base


def write_release(
    root: Path,
    records: list[dict[str, Any]] | None = None,
    labels: list[dict[str, Any]] | None = None,
    directory: str = "gap",
    views: tuple[str, ...] = ("correct", "shuffled", "counterfactual"),
    raw_task_lines: list[str] | None = None,
) -> Path:
    records = records if records is not None else [record(f"r{i}") for i in range(6)]
    labels = (
        labels
        if labels is not None
        else [{"record_id": r["record_id"], "label": i % 4} for i, r in enumerate(records)]
    )
    folder = root / "data" / directory
    folder.mkdir(parents=True, exist_ok=True)
    for view in views:
        task_lines = raw_task_lines or [json.dumps(r) for r in records]
        (folder / f"{view}.jsonl").write_text("\n".join(task_lines) + "\n", encoding="utf-8")
        (folder / f"{view}.labels.jsonl").write_text(
            "".join(json.dumps(lab) + "\n" for lab in labels), encoding="utf-8"
        )
    return root


@pytest.fixture
def release(tmp_path: Path) -> Callable[..., Path]:
    def make(**kwargs: Any) -> Path:
        return write_release(tmp_path / "release", **kwargs)

    return make


@pytest.fixture
def make_record() -> Callable[..., dict[str, Any]]:
    return record


@pytest.fixture(autouse=True)
def _own_loaded_data_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    """Each test starts with an empty loaded-data cache, on disk and in memory (core.load)."""
    from benchreg.core.load import forget

    monkeypatch.setenv("BENCHREG_CACHE_DIR", str(tmp_path_factory.mktemp("benchreg-cache")))
    forget()
