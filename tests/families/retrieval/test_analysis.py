"""The analysis `retrieval_modalities` on job folders written here: the metric cells, the
per-query values recomputed from each sample's resolution, and the per-holder / per-as_of
breakdowns (values computed by hand)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchreg.core import registry
from benchreg.core.analysis import JobRecord
from benchreg.families.retrieval.analysis import (
    _as_of_date,
    _cell,
    _holder,
    _param,
    breakdown,
    per_query,
    retrieval_modalities,
)

AS_OF = "2024-02-01T00:00:00+00:00"
NDCG_HALF = 1 / (1 + 1 / math.log2(3))  # 2 gold, only the first found at rank 1

ROWS: list[dict[str, Any]] = [
    {"id": "r1", "gold": [{"source_id": "a"}, {"source_id": "b"}],
     "meta": {"holder": "alice", "as_of": AS_OF},
     "metadata": {"resolution": {"n_results": 3, "first_hit": [1, 0], "flagged": {"future": [2]},
                                 "unknown": {}, "max_score": 2.0, "n_unscored": 0}}},
    {"id": "r2", "gold": [], "meta": {"holder": "bob", "as_of": None},
     "metadata": {"resolution": {"n_results": 2, "first_hit": [], "max_score": 0.3}}},
    {"id": "r3", "gold": [{"source_id": "c"}], "meta": {}, "metadata": {}},  # invalid answer
    {"id": "r4", "gold": [], "meta": None,
     "metadata": {"resolution": {"n_results": 0, "first_hit": []}}},
]
METRICS = [
    {"name": "recall_at_k", "params": {"k": 10, "gate": ">= 0.90"}},
    {"name": "mrr"},
    {"name": "ndcg_at_k", "params": {"k": 10}},
    {"name": "false_recall", "params": {"gate": "<= 0.10"}},
]


def job(folder: Path, *, model: str = "baseline", metrics: dict[str, Any] | None = None,
        spec_metrics: list[dict[str, Any]] | None = None,
        rows: list[dict[str, Any]] | None = None) -> JobRecord:
    folder.mkdir(parents=True)
    (folder / "samples.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in (ROWS if rows is None else rows)), "utf-8")
    record = {"task": "retrieval/pdf", "family": "retrieval", "view": "dev", "model": model,
              "model_id": f"baseline:{model}",
              "metrics": metrics if metrics is not None else {
                  "recall@10": {"value": 0.25, "n": 2, "denominator": 2,
                                "detail": {"gate": ">= 0.90", "pass": False}},
                  "mrr": {"value": 0.5, "n": 2, "denominator": 2}},
              "counts": {"entries": 4}}
    provenance = {"task_spec": {"metrics": spec_metrics if spec_metrics is not None else METRICS},
                  "data_root": "/data", "data_files_sha256": {"sets/pdf.jsonl": "ab" * 32,
                                                              "corpus/manifest.jsonl": "cd" * 32}}
    return JobRecord(folder, record, provenance)


def test_registered() -> None:
    assert registry.analyses.get("retrieval_modalities") is retrieval_modalities


@pytest.mark.parametrize(
    ("metric", "text"),
    [
        ({"value": 0.25, "n": 2, "denominator": 4}, "0.2500 (2/4)"),
        ({"value": 1.0, "n": 3, "denominator": 3, "detail": {"gate": ">= 0.90", "pass": True}},
         "1.0000 (3/3) pass >= 0.90"),
        ({"value": 0.5, "n": 1, "denominator": 2, "detail": {"gate": "<= 0.10", "pass": False}},
         "0.5000 (1/2) FAIL <= 0.10"),
        ({"value": 0.0, "n": 0, "denominator": 0, "detail": {"gate": ">= 0.95", "pass": None}},
         "0.0000 (0/0) n/a >= 0.95"),
        ({"value": 0.1, "n": 1, "denominator": 1, "detail": None}, "0.1000 (1/1)"),
    ],
)
def test_cell(metric: dict[str, Any], text: str) -> None:
    assert _cell(metric) == text


def test_param_reads_the_task_spec(tmp_path: Path) -> None:
    record = job(tmp_path / "j")
    assert _param(record, "recall_at_k", "k", 5) == 10
    assert _param(record, "mrr", "k", 7) == 7  # no params
    assert _param(record, "latency_quantile", "q", 0.5) == 0.5  # not named


def test_group_keys() -> None:
    assert _holder(ROWS[0]) == "alice" and _holder(ROWS[2]) == "(none)"
    assert _holder(ROWS[3]) == "(none)"
    assert _as_of_date(ROWS[0]) == "2024-02-01" and _as_of_date(ROWS[1]) == "(none)"


def test_per_query_values(tmp_path: Path) -> None:
    values = [v for _, v in per_query(job(tmp_path / "j"))]
    assert values[0] == {"recall@10": 0.5, "mrr": 1.0, "ndcg@10": pytest.approx(NDCG_HALF),
                         "temporal_correctness": 0.0, "holder_correctness": 1.0}
    assert values[1] == {"false_recall": 1.0, "holder_correctness": 1.0}  # no strong_score
    assert values[2] == {"recall@10": 0.0, "mrr": 0.0, "ndcg@10": 0.0}  # unscored: worst
    assert values[3] == {"false_recall": 0.0}  # no result at all is no false recall


def test_per_query_strong_score_and_k(tmp_path: Path) -> None:
    spec = [{"name": "recall_at_k", "params": {"k": 1}},
            {"name": "false_recall", "params": {"strong_score": 0.5}}]
    rows = [ROWS[1], {**ROWS[0], "metadata": {"resolution": {"n_results": 3,
                                                             "first_hit": [2, 1]}}}]
    values = [v for _, v in per_query(job(tmp_path / "j", spec_metrics=spec, rows=rows))]
    assert values[0]["false_recall"] == 0.0  # max score 0.3 < strong_score 0.5
    assert values[1]["recall@1"] == 0.5 and values[1]["mrr"] == 1.0
    assert values[1]["ndcg@1"] == pytest.approx(1.0)  # the ideal DCG at 1 is one hit too


def test_unscored_unanswerable_counts_as_false_recall(tmp_path: Path) -> None:
    rows = [{"id": "u", "gold": [], "meta": {"as_of": AS_OF, "holder": "bob"}, "metadata": {}}]
    ((_, values),) = per_query(job(tmp_path / "j", rows=rows))
    assert values == {"false_recall": 1.0, "temporal_correctness": 0.0,
                      "holder_correctness": 0.0}


def test_breakdown_per_holder(tmp_path: Path) -> None:
    markdown, data = breakdown([job(tmp_path / "j")], _holder, "holder")
    assert [(d["holder"], d["entries"]) for d in data] == [("(none)", 2), ("alice", 1), ("bob", 1)]
    none, alice, bob = data
    assert none["recall@10"] == [0.0, 1] and none["false_recall"] == [0.0, 1]
    assert none["temporal_correctness"] is None
    assert alice["recall@10"] == [0.5, 1] and alice["mrr"] == [1.0, 1]
    assert alice["ndcg@10"] == [pytest.approx(NDCG_HALF), 1]
    assert (alice["temporal_correctness"], alice["holder_correctness"]) == ([0.0, 1], [1.0, 1])
    assert bob["false_recall"] == [1.0, 1] and bob["recall@10"] is None
    assert alice["model"] == "baseline" and alice["model_id"] == "baseline:baseline"
    lines = markdown.splitlines()
    assert lines[0] == ("| task | view | model | holder | entries | recall@10 | mrr | ndcg@10 | "
                        "false_recall | temporal_correctness | holder_correctness |")
    assert lines[3] == ("| retrieval/pdf | dev | baseline | alice | 1 | 0.5000 (n=1) | "
                        "1.0000 (n=1) | 0.6131 (n=1) |  | 0.0000 (n=1) | 1.0000 (n=1) |")


def test_breakdown_per_as_of(tmp_path: Path) -> None:
    _, data = breakdown([job(tmp_path / "j")], _as_of_date, "as_of")
    assert [(d["as_of"], d["entries"]) for d in data] == [("(none)", 3), ("2024-02-01", 1)]
    assert data[0]["recall@10"] == [0.0, 1]
    assert data[0]["false_recall"] == [0.5, 2]  # r2 (1.0) and r4 (0.0)


def test_breakdown_follows_the_task_k(tmp_path: Path) -> None:
    spec = [{"name": "recall_at_k", "params": {"k": 5}}]
    jobs = [job(tmp_path / "j", spec_metrics=spec)]
    markdown, data = breakdown(jobs, _holder, "holder")
    alice = next(d for d in data if d["holder"] == "alice")
    assert alice["recall@5"] == [0.5, 1]
    names = {name for _, values in per_query(jobs[0]) for name in values}
    assert {"recall@5", "ndcg@5"} <= names and not {"recall@10", "ndcg@10"} & names
    assert alice["ndcg@5"] is not None and "recall@10" not in alice and "ndcg@10" not in alice
    assert "| recall@5 | mrr | ndcg@5 |" in markdown


def test_breakdown_of_jobs_with_different_k(tmp_path: Path) -> None:
    spec = [{"name": "recall_at_k", "params": {"k": 5}}]
    five, ten = job(tmp_path / "a", model="five", spec_metrics=spec), job(tmp_path / "b")
    markdown, data = breakdown([five, ten], _holder, "holder")
    assert "| recall@5 | recall@10 | mrr | ndcg@5 | ndcg@10 |" in markdown
    first, second = (
        next(d for d in data if d["holder"] == "alice" and d["model"] == name)
        for name in ("five", "baseline")
    )
    assert first["recall@5"] == [0.5, 1] and first["recall@10"] is None
    assert second["recall@10"] is not None and second["recall@5"] is None


def test_the_report(tmp_path: Path) -> None:
    random_metrics = {"false_recall": {"value": 0.75, "n": 4, "denominator": 4,
                                       "detail": {"gate": "<= 0.10", "pass": False}}}
    jobs = [job(tmp_path / "b", model="random", metrics=random_metrics), job(tmp_path / "a")]
    report = retrieval_modalities(jobs)
    assert report.name == "retrieval_modalities" and report.error is None
    md = report.markdown
    assert md.startswith("# Retrieval: every metric per modality\n")
    # columns: the metrics in the order the (sorted) jobs first give them
    assert "| task | view | model | recall@10 | mrr | false_recall |" in md
    assert ("| retrieval/pdf | dev | baseline | 0.2500 (2/2) FAIL >= 0.90 | 0.5000 (2/2) |  |"
            in md)
    assert "| retrieval/pdf | dev | random |  |  | 0.7500 (4/4) FAIL <= 0.10 |" in md
    assert f"| retrieval/pdf | dev | corpus/manifest.jsonl | {'cd' * 32} |" in md
    assert md.index("corpus/manifest.jsonl") < md.index("sets/pdf.jsonl")
    assert "## Per holder" in md and "## Per as_of date" in md and md.endswith("\n")
    runs = report.data["runs"]
    assert [r["model"] for r in runs] == ["baseline", "random"]
    assert runs[0]["counts"] == {"entries": 4}
    assert runs[0]["sha256"]["sets/pdf.jsonl"] == "ab" * 32
    assert len(report.data["per_holder"]) == 6 and len(report.data["per_as_of"]) == 4
