"""A copy of the embedded sample per test (so a test can break it), and small helpers."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchreg.core import registry

SAMPLE = Path(__file__).resolve().parents[3] / "benchreg" / "families" / "retrieval" / "sample"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    registry.load_components()
    shutil.copytree(SAMPLE, tmp_path / "root")
    return tmp_path / "root"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")


@pytest.fixture
def edit_entry(root: Path) -> Callable[[str, int, Callable[[dict], None]], None]:
    def edit(modality: str, index: int, change: Callable[[dict], None]) -> None:
        path = root / "sets" / f"{modality}.jsonl"
        rows = read_jsonl(path)
        change(rows[index])
        write_jsonl(path, rows)

    return edit
