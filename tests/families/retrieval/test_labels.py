"""Labels that agree (issue 37, item 7): the headline names the set files a run read with their
sha256 whatever the files are called; demonstration data never prints a bare gate verdict."""

from __future__ import annotations

from pathlib import Path

from benchreg import RunOptions, load_task, run_task
from benchreg.core.outputs import write_run
from benchreg.core.registry import report_parts
from benchreg.core.reporting import ReportInput

FAST = RunOptions(progress=False, n_boot=50)


def _headline_files(record: dict, tmp_path: Path) -> str:
    made = report_parts.get("retrieval").headline(ReportInput("retrieval", tmp_path, [record]))
    assert made is not None
    return made.rows[0][made.columns.index("sha256 read")]


def test_sets_named_after_their_source_are_cited_with_their_sha256(
    root: Path, tmp_path: Path
) -> None:
    # an imported root's layout: sets/<source>.jsonl, none named after the modality
    for source, modality in (("locomo", "conversation"), ("mmlongbench_doc", "pdf")):
        (root / "sets" / f"{modality}.jsonl").rename(root / "sets" / f"{source}.jsonl")
    result = run_task(load_task("retrieval/conversation"), view="dev", options=FAST,
                      system_cfg={"name": "baseline"}, roots={"retrieval": str(root)})
    record = write_run(tmp_path / "run", result, {})
    data = record["sha256"]["data"]
    # the set file holding the run's entries (not every set file in the root) and the manifest
    assert sorted(data) == ["corpus/manifest.jsonl", "sets/locomo.jsonl"]
    cell = _headline_files(record, tmp_path)
    assert f"set\u00a0locomo\u00a0{data['sets/locomo.jsonl'][:12]}" in cell
    assert f"manifest\u00a0{data['corpus/manifest.jsonl'][:12]}" in cell


def test_the_sample_cites_the_set_named_after_the_modality(tmp_path: Path) -> None:
    sha = {"sets/pdf.jsonl": "b" * 64, "sets/code.jsonl": "a" * 64,
           "corpus/manifest.jsonl": "c" * 64}
    gated = {"value": 0.8, "n": 8, "denominator": 9, "detail": {"gate": ">= 0.9", "pass": False}}
    record = {"task": "retrieval/code", "model": "bm25", "metrics": {"recall@10": gated},
              "sha256": {"data": sha}}
    assert _headline_files(record, tmp_path) == f"set\u00a0{'a' * 12}\nmanifest\u00a0{'c' * 12}"


def test_a_metric_over_part_of_the_samples_names_the_statuses_as_the_run_does(
    tmp_path: Path,
) -> None:
    """The console's `not ok` of recall@10 (answerable entries only) says `invalid 6` where
    the statuses say invalid=8 (2 on unanswerable entries), never `missing 6`."""
    from benchreg.core.pipeline import data_root_for, load_dataset
    from benchreg.core.scoring import score
    from benchreg.core.summary import run_table, support
    from benchreg.core.types import Prediction, Status

    task = load_task("retrieval/conversation")
    samples = list(load_dataset(task, "dev", data_root_for(task, {})).samples)
    answerable = [s for s in samples if s.gold]
    unanswerable = [s for s in samples if not s.gold]
    bad = {s.id for s in answerable[:6] + unanswerable[:2]}
    preds = [
        Prediction(s.id, status=Status.INVALID, detail="planted")
        if s.id in bad else Prediction(s.id, status=Status.MISSING)
        for s in samples
    ]
    preds[[s.id for s in samples].index(answerable[-1].id)] = Prediction(
        answerable[-1].id, status=Status.ERROR, detail="planted")
    values = score(task, samples, preds, n_boot=0, progress=False).values
    recall = values["recall@10"]
    assert recall.detail["not_ok"] == {"missing": 2, "invalid": 6, "error": 1}
    metric = {"n": recall.n, "denominator": recall.denominator, "detail": recall.detail}
    statuses = {"ok": 0, "missing": 3, "invalid": 8, "error": 1}
    record = {"task": "retrieval/conversation", "model": "m", "primary": "recall@10",
              "n": len(samples), "statuses": statuses, "metrics": {"recall@10": metric}}
    sup = support(record, metric)
    assert sup.not_ok_text == "missing 2, invalid 6, error 1"
    assert "invalid 6" in run_table(record, answered=True)


def test_latency_n_counts_answers_with_a_latency_and_the_rest_makes_the_denominator() -> None:
    """30 samples: 19 ok with a latency, 3 ok without (read from a file), 3 invalid and 5
    failed requests with a latency: n 27/30 and `no latency 3` (never 24 + 3 + 5 of 30)."""
    from benchreg.core.ranking.latency_quantile import LatencyQuantile
    from benchreg.core.summary import run_table, support
    from benchreg.core.types import Prediction, Sample, Status

    statuses = [Status.OK] * 22 + [Status.INVALID] * 3 + [Status.ERROR] * 5
    latency = [0.1] * 19 + [None] * 3 + [0.2] * 8
    preds = [Prediction(str(i), status=s, latency_s=x)
             for i, (s, x) in enumerate(zip(statuses, latency, strict=True))]
    samples = [Sample(str(i), {}, [], {}) for i in range(30)]
    metric = LatencyQuantile(q=0.5)
    stats = metric.stats(samples, preds)
    n, denominator = metric.support(stats, preds)
    record_metric = {"value": 0.1, "n": n, "denominator": denominator,
                     "detail": metric.detail(stats)}
    record = {"task": "t", "model": "m", "primary": "latency_p50", "n": 30,
              "statuses": {"ok": 22, "invalid": 3, "error": 5},
              "metrics": {"latency_p50": record_metric}}
    sup = support(record, record_metric)
    assert (sup.n, sup.denominator, sup.not_ok) == (27, 30, {"no latency": 3})
    assert sup.n + sum(sup.not_ok.values()) == sup.denominator
    table = run_table(record, answered=True)
    assert "27/30" in table and "no latency 3" in table
    assert "latency_p50: n = answers with a latency (any status)" in table
