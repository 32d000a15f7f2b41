"""The use-claim rule on hand-built sweeps: a property user and a property ignorer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchreg.core.analysis import JobRecord
from benchreg.families.molp2s.analysis import cross_view

N = 20


def job(tmp: Path, view: str, rows: list[dict[str, Any]]) -> JobRecord:
    record = JobRecord(
        tmp / view, {"task": "molp2s/gap", "family": "molp2s", "view": view, "model": "m"}, {}
    )
    record.__dict__["samples"] = rows  # cached_property slot: no files needed
    return record


def rows(hit: list[bool], view: str, answers: list[int] | None = None) -> list[dict[str, Any]]:
    out = []
    for i, h in enumerate(hit):
        gold = 1 if view == "counterfactual" else 0
        answer = answers[i] if answers else (gold if h else 3)
        out.append(
            {
                "id": f"r{i}" + ("-cf" if view == "counterfactual" else ""),
                "gold": gold,
                "answer": answer,
                "status": "ok",
                "score": 1.0 if h else 0.0,
                "meta": {"n_candidates": 4, "scaffold": f"s{i}"},
            }
        )
    return out


def sweep(tmp: Path, correct: bool, shuffled: bool, donor: bool, so_answer: int) -> list[JobRecord]:
    return [
        job(tmp, "correct", rows([correct] * N, "correct")),
        job(tmp, "shuffled", rows([shuffled] * N, "shuffled")),
        job(tmp, "counterfactual", rows([donor] * N, "counterfactual")),
        job(tmp, "structure_only", rows([so_answer == 0] * N, "structure_only", [so_answer] * N)),
    ]


def test_property_user_is_supported(tmp_path: Path) -> None:
    report = cross_view(sweep(tmp_path, correct=True, shuffled=False, donor=True, so_answer=0))
    claim = report.data["models"]["m"]["molp2s/gap"]
    assert claim["shuffle_drop"]["drop"] == 1.0
    assert claim["shuffle_drop"]["lost"] == N
    assert claim["donor"]["chance"] == 0.25
    assert claim["donor"]["structure_only"]["structure_only_donor_rate"] == 0.0
    assert claim["use_claim"] == "supported"
    assert "Use claim supported iff" in report.markdown


def test_structure_reader_is_not_supported(tmp_path: Path) -> None:
    # Same accuracy everywhere, and the structure-only choice already lands on the donor.
    report = cross_view(sweep(tmp_path, correct=True, shuffled=True, donor=True, so_answer=1))
    claim = report.data["models"]["m"]["molp2s/gap"]
    assert claim["shuffle_drop"]["drop"] == 0.0
    assert claim["use_claim"].startswith("not supported")
    assert "shuffle drop" in claim["use_claim"] and "structure-only" in claim["use_claim"]


def test_missing_views_are_not_assessable(tmp_path: Path) -> None:
    report = cross_view([job(tmp_path, "correct", rows([True] * N, "correct"))])
    assert report.data["models"]["m"]["molp2s/gap"]["use_claim"].startswith("not assessable")
