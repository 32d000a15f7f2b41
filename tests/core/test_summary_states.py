"""The summary and the per-run table treat a run whose metrics.json says `complete: false` as
incomplete (issue 19, item 1): listed as such, its value marked, never a plain `ok` result; older
records without the key are complete. Every metric row carries n/denominator and its CI."""

from __future__ import annotations

from typing import Any

from benchreg.core.summary import run_table, summary_csv, summary_markdown, summary_row


def record(**extra: Any) -> dict[str, Any]:
    metric = {"value": 0.25, "n": 4, "denominator": 4, "ci95": [0.05, 0.7]}
    return {
        "task": "molp2s/gap",
        "view": "correct",
        "model": "m",
        "model_id": "m-id",
        "primary": "accuracy",
        "n": 4,
        "metrics": {"accuracy": metric},
        "statuses": {"ok": 1, "missing": 0, "invalid": 0, "out_of_range": 0, "error": 3},
        **extra,
    }


INCOMPLETE = {
    "complete": False,
    "incomplete": {"errors": 3, "of": 4, "by_cause": {"HTTP 503": 2, "timeout": 1}},
}


def test_an_incomplete_run_is_an_incomplete_row() -> None:
    row = summary_row("0_job", record(**INCOMPLETE), None)
    assert row["status"] == "incomplete" and row["value"] == 0.25
    assert row["error"] == "3 of 4 requests failed (HTTP 503: 2, timeout: 1)"
    assert summary_row("0_job", record(complete=True), None)["status"] == "ok"
    assert summary_row("0_job", record(), None)["status"] == "ok"  # older: no key = complete
    # a caller that knows the state from the folder (sweepfolder.job_states) may say so
    assert summary_row("0_job", record(), None, status="incomplete")["status"] == "incomplete"
    assert summary_row("1_job", None, {"error": "boom"})["status"] == "failed"
    assert summary_row("2_job", None, {}, status="unfinished")["status"] == "unfinished"


def test_the_markdown_marks_the_value_and_counts_the_state() -> None:
    rows = [summary_row("0_a", record(**INCOMPLETE), None), summary_row("1_b", record(), None)]
    md = summary_markdown(rows)
    line = next(x for x in md.splitlines() if x.startswith("| 0_a |"))
    assert "| 0.2500 (incomplete) | 4/4 | [0.0500, 0.7000] |" in line
    assert line.endswith("| incomplete: 3 of 4 requests failed (HTTP 503: 2, timeout: 1) |")
    ok_line = next(x for x in md.splitlines() if x.startswith("| 1_b |"))
    assert ok_line.endswith("| 0.2500 | 4/4 | [0.0500, 0.7000] | ok |")
    assert "1 of 2 jobs succeeded." in md
    assert "1 job(s) incomplete (failed requests: run the same sweep again" in md
    assert "0_a,molp2s/gap,correct,m,m-id,accuracy,0.25,4,4,0.05,0.7,0,incomplete," in summary_csv(
        rows
    )


def test_run_table_says_incomplete_and_shows_every_metric_with_n_and_ci() -> None:
    rec = record(**INCOMPLETE)
    rec["metrics"]["coverage"] = {"value": 0.75, "n": 3, "denominator": 4}
    rec["metrics"]["f1"] = {"value": 0.5, "n": 4, "denominator": 4, "ci95": [0.2, 0.8]}
    table = run_table(rec).splitlines()
    assert any(x.split()[:4] == ["accuracy", "*", "0.2500", "4/4"] for x in table)
    assert any(x.split() == ["coverage", "0.7500", "3/4"] for x in table)  # no CI recorded
    assert any(x.split() == ["f1", "0.5000", "4/4", "[0.2000,", "0.8000]"] for x in table)
    assert table[-1].startswith("INCOMPLETE: 3 of 4 requests failed")
    assert not any(x.startswith("INCOMPLETE") for x in run_table(record()).splitlines())


def test_run_table_tolerates_a_ci_with_a_missing_bound() -> None:
    rec = record()
    rec["metrics"]["accuracy"]["ci95"] = [None, None]
    assert "accuracy *" in run_table(rec)
