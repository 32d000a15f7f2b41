"""The prediction reader `retrieval_run`: JSON Lines (results or model text) and TREC runs with
their atoms file; malformed lines, unknown ids, duplicates and missing docnos."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.types import Sample, Status
from benchreg.families.retrieval.predictions import read_run

TASK = "retrieval/conversation"
SAMPLES = [Sample(q, {}, [], {"modality": "conversation"}) for q in ("q1", "q2", "q3")]
RESULT = {"source_id": "s0", "region": {"turn": 1}, "score": 2.0}
ATOMS = [
    {"atom_id": "a1", "source_id": "s0", "region": {"turn": 1}, "observed_at": None,
     "holder": None},
    {"atom_id": "a2", "source_id": "s0", "region": {"turn": 2}},
    {"atom_id": "a3", "source_id": "s1", "region": {"turn": 0}},
]


def lines(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
                    "utf-8")
    return path


def test_registered() -> None:
    assert registry.prediction_readers.get("retrieval_run") is read_run


def test_jsonl_results_and_model_text(tmp_path: Path) -> None:
    path = lines(tmp_path / "run.jsonl", [
        {"query_id": "q1", "results": [RESULT], "latency_s": 0.5},
        {"query_id": "q2", "output": '{"results": []}', "latency_s": 2},
        "not json",
        ["q3"],
        {"results": []},
        {"query_id": "other", "results": []},
    ])
    found = read_run(path, SAMPLES, TASK)
    q1, q2 = found.by_id["q1"], found.by_id["q2"]
    assert (q1.answer, q1.latency_s, q1.status) == ({"results": [RESULT], "latency_s": 0.5}, 0.5,
                                                    Status.OK)
    assert (q2.answer, q2.raw_text, q2.latency_s) == (None, '{"results": []}', 2.0)
    assert set(found.by_id) == {"q1", "q2"}
    assert found.unknown_ids == ["other"]
    assert found.files == [path]
    assert f"{TASK}: 1 sample(s) have no prediction: q3" in found.notes
    assert any(n.startswith(f"{TASK}: 3 malformed entr(y/ies)") and f"{path}:3" in n
               for n in found.notes)


def test_a_line_without_results_or_output_is_invalid(tmp_path: Path) -> None:
    path = lines(tmp_path / "run.jsonl", [{"query_id": "q1", "output": 3},
                                          {"query_id": "q2", "latency_s": "slow", "results": []}])
    found = read_run(path, SAMPLES, TASK)
    assert (found.by_id["q1"].status, found.by_id["q1"].detail) == (Status.INVALID,
                                                                    "no `results`")
    assert found.by_id["q2"].latency_s is None  # not a number: no latency


def test_duplicates(tmp_path: Path) -> None:
    same = {"query_id": "q1", "results": [RESULT]}
    path = lines(tmp_path / "run.jsonl", [same, same, {"query_id": "q2", "results": []},
                                          {"query_id": "q2", "results": [RESULT]}])
    found = read_run(path, SAMPLES, TASK)
    assert found.by_id["q1"].status is Status.OK  # an identical repeat is ignored
    assert found.by_id["q2"].status is Status.INVALID
    assert found.by_id["q2"].detail == (
        f"conflicting duplicate entries ({path}:3, {path}:4)")


def test_a_file_for_none_of_the_samples_stops(tmp_path: Path) -> None:
    path = lines(tmp_path / "run.jsonl", [{"query_id": "x", "results": []}])
    with pytest.raises(BenchregError, match=rf"none of the 3 samples of {TASK} has a prediction"):
        read_run(path, SAMPLES, TASK)


def test_trec_orders_by_score_then_docno_descending(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a1 1 1.5 mine\nq1 Q0 a2 9 2.5 mine\n\nq1 Q0 a3 2 2.5 mine\n"
                   "q2 Q0 a1 1 0 mine\n", "utf-8")
    atoms = lines(tmp_path / "run.trec.atoms.jsonl", ATOMS)
    found = read_run(run, SAMPLES, TASK)
    results = found.by_id["q1"].answer["results"]
    assert [(r["atom_id"], r["score"]) for r in results] == [("a3", 2.5), ("a2", 2.5),
                                                            ("a1", 1.5)]
    assert results[2] == {**ATOMS[0], "score": 1.5}
    assert found.by_id["q1"].answer["latency_s"] is None
    assert found.by_id["q2"].answer["results"] == [{**ATOMS[0], "score": 0.0}]
    assert found.files == [run, atoms]


def test_trec_malformed_lines_are_listed(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a1\nq1 Q0 a1 1 high mine\nq1 Q0 a1 1 2.0 mine extra\n"
                   "q1 Q0 a2 1 2.0 mine\n", "utf-8")
    lines(tmp_path / "run.txt.atoms.jsonl", ATOMS)
    found = read_run(run, SAMPLES, TASK)
    assert [r["atom_id"] for r in found.by_id["q1"].answer["results"]] == ["a2"]
    malformed = next(n for n in found.notes if "malformed" in n)
    assert f"{run}:1" in malformed and f"{run}:2" in malformed and f"{run}:3" in malformed
    assert f"{run}:4" not in malformed


def test_an_atoms_file_named_by_the_param(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a3 1 1.0 mine\n", "utf-8")
    atoms = lines(tmp_path / "elsewhere.jsonl", ATOMS)
    found = read_run(run, SAMPLES, TASK, atoms=str(atoms))
    assert found.by_id["q1"].answer["results"][0]["source_id"] == "s1"
    assert found.files[-1] == atoms


def test_a_docno_missing_from_the_atoms_makes_the_answer_invalid(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a1 1 1.0 mine\nq1 Q0 zz 2 0.5 mine\nq2 Q0 a1 1 1.0 mine\n", "utf-8")
    lines(tmp_path / "run.trec.atoms.jsonl", ATOMS)
    found = read_run(run, SAMPLES, TASK)
    assert (found.by_id["q1"].status, found.by_id["q1"].detail) == (
        Status.INVALID, "docno 'zz' not in atoms")
    assert found.by_id["q2"].status is Status.OK


def test_a_trec_run_without_atoms(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a1 1 1.0 mine\n", "utf-8")
    with pytest.raises(BenchregError) as info:
        read_run(run, SAMPLES, TASK)
    assert info.value.where == str(tmp_path / "run.trec.atoms.jsonl")
    assert info.value.what.startswith("a TREC run needs its atoms file")
    assert "set the reader param `atoms`" in (info.value.fix or "")


def test_atoms_with_a_repeated_id(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a1 1 1.0 mine\n", "utf-8")
    atoms = lines(tmp_path / "run.trec.atoms.jsonl", [ATOMS[0], ATOMS[0]])
    with pytest.raises(BenchregError, match=rf"duplicate atom_id 'a1' \(first at {atoms}:1\)"):
        read_run(run, SAMPLES, TASK)
