"""What the end of a sweep says on the terminal: rows that cannot be tested are one line (the
report keeps a row per task), and a job whose data is no benchmark result says so in the
headline and the summary (issues 37 and 38)."""

from __future__ import annotations

import shutil
from pathlib import Path

from benchreg.app.report import headline as headline_view
from benchreg.core.reporting import ReportInput
from benchreg.core.summary import state_lines, summary_markdown, summary_row
from tests.app.test_headlines import analysis, claim, part

RETRIEVAL_SAMPLE = Path(__file__).parents[2] / "benchreg" / "families" / "retrieval" / "sample"


def test_a_one_view_molp2s_sweep_says_not_testable_once(cli, tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = cli(
        "-m",
        "task=glob(molp2s/*)",
        "view=counterfactual",
        "model=baseline,random",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    end = proc.stdout[proc.stdout.index("MolP2S: accuracy by view") :]
    headline = end[: end.index("jobs succeeded")]
    assert proc.stdout.count("not testable") == 1
    assert (
        "use-claim verdict: not testable for all 30 rows (needs views correct, shuffled, "
        "structure_only)" in " ".join(headline.split())
    )
    assert len(headline.strip().splitlines()) <= 6, headline  # was 135 lines
    page = (sweep / "report" / "index.html").read_text("utf-8")
    assert page.count("not run: needs correct, shuffled") == 30  # the report keeps every row


def test_testable_rows_stay_and_the_others_are_one_line(tmp_path: Path) -> None:
    models = {
        "m1": {
            "molp2s/gap": claim("supported", True, True),
            "molp2s/dipole": claim("not testable", None, None),
            "molp2s/raman": claim("not testable", None, None),
        }
    }
    analysis(tmp_path, "molp2s_views", {"alpha": 0.05, "models": models})
    made = part("molp2s").headline(ReportInput("molp2s", tmp_path, []))
    assert made is not None and len(made.rows) == 3  # the report: a row per property
    shown = headline_view.text(made, 200)
    assert "use-claim verdict: not testable for 2 of 3 rows (needs views structure_only)" in shown
    assert "gap" in shown and "dipole" not in shown and "raman" not in shown
    assert "dipole" in headline_view.markdown(made)  # pages keep the detail


def test_every_testable_row_has_no_terminal_form(tmp_path: Path) -> None:
    models = {"m1": {"molp2s/gap": claim("supported", True, True)}}
    analysis(tmp_path, "molp2s_views", {"alpha": 0.05, "models": models})
    made = part("molp2s").headline(ReportInput("molp2s", tmp_path, []))
    assert made is not None and made.terminal is None


def _void_root(tmp_path: Path) -> Path:
    from tests.families.retrieval.test_void_stop import unregister_gold

    root = tmp_path / "root"
    shutil.copytree(RETRIEVAL_SAMPLE, root)
    unregister_gold(root, 2)
    return root


def test_a_void_run_is_no_benchmark_result_in_the_headline_and_summary(cli, tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    proc = cli(
        "-m",
        "task=retrieval/pdf,retrieval/code",
        f"roots.retrieval={_void_root(tmp_path)}",
        "loader_params.allow_void=true",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    flat = " ".join(proc.stdout.split())
    assert "Not a benchmark result: pdf (dev, baseline:bm25): 2 of 12 entries are void" in flat
    assert "1 job is not a benchmark result: 000_retrieval-pdf_dev_baseline (2 of 12" in flat
    assert "Not a benchmark result: code" not in flat  # the code job read its data in full
    summary = (sweep / "summary.md").read_text("utf-8")
    assert "1.0000 (not a benchmark result)" in summary
    assert "1 job is not a benchmark result: 000_retrieval-pdf_dev_baseline" in summary
    page = (sweep / "report" / "index.html").read_text("utf-8")
    assert "2 of 2 jobs succeeded; 1 not a benchmark result." in page


def test_summary_rows_carry_the_reason_only_when_the_run_is_no_result() -> None:
    metric = {"value": 0.5, "n": 2, "denominator": 2, "ci95": [0.1, 0.9]}
    record = {"task": "t", "model": "m", "primary": "x", "metrics": {"x": metric}}
    void = {**record, "benchmark_result": False, "not_a_result": "3 of 4 entries are void"}
    rows = [summary_row("000_a", record, None), summary_row("001_b", void, None)]
    assert "not_a_result" not in rows[0]
    assert rows[1]["not_a_result"] == "3 of 4 entries are void" and rows[1]["status"] == "ok"
    assert state_lines(rows)[1:] == [
        "1 job is not a benchmark result: 001_b (3 of 4 entries are void)."
    ]
    table = summary_markdown(rows)
    assert table.count("(not a benchmark result)") == 1
