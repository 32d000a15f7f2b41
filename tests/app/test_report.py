"""`benchreg report`: files, counts table, the markdown-only fallback without pygal, and
the CLI (on synthetic sweep folders; the browser test renders a real sweep's page)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import benchreg.core
from benchreg.app.commands import main as command_main
from benchreg.app.report import INSTALL_HINT, write_report


def write_job(
    sweep: Path,
    name: str,
    task: str,
    view: str,
    model: str,
    scores: list[float],
    *,
    statuses: dict | None = None,
    data_sha: str = "d0",
    error: str | None = None,
    model_id: str | None = None,
    extra: dict | None = None,
) -> Path:
    folder = sweep / name
    folder.mkdir(parents=True)
    if error is not None:
        (folder / "error.json").write_text(
            json.dumps({"task": task, "view": view, "model": model, "error": error})
        )
        return folder
    n = len(scores)
    value = sum(scores) / n
    record = {
        "task": task,
        "family": task.split("/")[0],
        "view": view,
        "model": model,
        "model_id": model_id or model,
        "primary": "accuracy",
        "n": n,
        "metrics": {
            "accuracy": {
                "value": value,
                "n": n,
                "denominator": n,
                "ci95": [max(0, value - 0.1), min(1, value + 0.1)],
                "ci_method": "wilson",
            }
        },
        "statuses": {
            "ok": n,
            "missing": 0,
            "invalid": 0,
            "out_of_range": 0,
            "error": 0,
            **(statuses or {}),
        },
        "degraded": 0,
        "counts": {},
        "sha256": {"data": {f"data/{task}.jsonl": data_sha}},
        **(extra or {}),
    }
    (folder / "samples.jsonl").write_text(
        "".join(
            json.dumps({"id": f"s{i}", "score": s, "status": "ok"}) + "\n"
            for i, s in enumerate(scores)
        )
    )
    (folder / "provenance.json").write_text("{}")
    (folder / "metrics.json").write_text(json.dumps(record))
    return folder


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    root = tmp_path / "sweep"
    write_job(root, "0_a", "molp2s/gap", "correct", "m1", [1, 0, 1, 1])
    write_job(
        root, "1_b", "molp2s/gap", "shuffled", "m1", [0, 0, 1, 0], statuses={"invalid": 2, "ok": 2}
    )
    write_job(root, "2_c", "molp2s/gap", "sideways", "m1", [], error="no view 'sideways'")
    return root


def test_report_writes_html_markdown_and_figures(sweep: Path) -> None:
    pytest.importorskip("pygal")
    result = write_report(sweep)
    assert result.out_dir == sweep / "report"
    assert [p.name for p in result.figures] == ["primary_molp2s.svg"]
    page = result.html.read_text()
    assert page.count('src="data:image/svg+xml;base64,') == 1
    assert "http://" not in page and "https://" not in page  # nothing fetched from a network
    assert "Runs that need a look" in page and "no view &#x27;sideways&#x27;" in page
    md = result.markdown.read_text()
    assert "![molp2s: primary metric" in md and "2 of 3 jobs succeeded" in md
    # the counts table flags the run with invalid answers and the failed job
    flagged = [line for line in md.splitlines() if line.startswith("| ! |")]
    assert len(flagged) == 2 and any("1_b" in line for line in flagged)


def test_without_pygal_the_markdown_says_how_to_install(
    sweep: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pygal", None)
    monkeypatch.delitem(sys.modules, "benchreg.core.figures", raising=False)
    monkeypatch.delattr(benchreg.core, "figures", raising=False)
    result = write_report(sweep)
    assert result.figures == []
    assert result.notes and INSTALL_HINT in result.notes[0]
    assert INSTALL_HINT in result.markdown.read_text()
    assert "| molp2s/gap | correct | m1 | accuracy | 0.7500 |" in result.markdown.read_text()


def test_report_command(sweep: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = sweep.parent / "elsewhere"
    assert command_main(["report", str(sweep), "--out", str(out)]) == 0
    assert (out / "index.html").is_file() and (out / "report.md").is_file()
    assert "wrote" in capsys.readouterr().out
    assert command_main(["report", str(sweep / "nope")]) == 2


def test_a_broken_analysis_file_does_not_stop_the_report(sweep: Path) -> None:
    pytest.importorskip("pygal")
    (sweep / "analysis_molp2s_views.json").write_text(json.dumps({"models": {"m1": [1, 2]}}))
    result = write_report(sweep)
    assert any("molp2s figure skipped" in note for note in result.notes)
    assert result.html.is_file()


# --- model identity, every metric, incomplete runs (issue 19, items 6 and 1) ----------------------

SHA_A = "0123456789ab" + "c" * 52
SHA_B = "fedcba987654" + "d" * 52
SHARED_NAME = "predictions:results.json"


@pytest.fixture
def two_files(tmp_path: Path) -> Path:
    """Two different predictions files both called results.json, and a baseline."""
    root = tmp_path / "sweep"
    for i, sha in enumerate((SHA_A, SHA_B)):
        write_job(
            root,
            f"{i}_x",
            "molp2s/gap",
            "correct",
            SHARED_NAME,
            [1, 0, 1, i],
            model_id=f"predictions:sha256={sha}",
        )
    write_job(root, "2_base", "molp2s/gap", "correct", "m1", [1, 1, 1, 0])
    return root


def test_two_models_of_one_name_are_told_apart_everywhere(
    two_files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pygal")
    from benchreg.core import figures

    drawn: list[dict] = []
    real = figures.primary_metric
    monkeypatch.setattr(
        figures, "primary_metric", lambda rows, title: drawn.extend(rows) or real(rows, title)
    )
    result = write_report(two_files)
    md = result.markdown.read_text()
    a, b = f"{SHARED_NAME} [01234567]", f"{SHARED_NAME} [fedcba98]"
    assert f"| molp2s/gap | correct | {a} | accuracy | 0.5000 |" in md
    assert f"| molp2s/gap | correct | {b} | accuracy | 0.7500 |" in md
    assert "| molp2s/gap | correct | m1 | accuracy |" in md  # no tag when the name is its own
    assert f"| {a} | predictions:sha256={SHA_A} | 1 |" in md  # the Models table: full identity
    assert sorted({row["model"] for row in drawn}) == sorted([a, b, "m1"])  # three series
    page = result.html.read_text()
    assert a in page and b in page


def test_the_report_parts_get_the_told_apart_names(
    two_files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchreg.core import registry
    from benchreg.core.reporting import ReportPart

    seen: list[str] = []

    def figures(data):  # type: ignore[no-untyped-def]
        seen.extend(str(r["model"]) for r in data.records)
        return []

    pytest.importorskip("pygal")
    monkeypatch.setattr(registry.report_parts, "get", lambda name, **_: ReportPart(figures))
    write_report(two_files)
    assert sorted(seen) == sorted([f"{SHARED_NAME} [01234567]", f"{SHARED_NAME} [fedcba98]", "m1"])


def test_every_metric_with_its_ci_and_n(tmp_path: Path) -> None:
    extra = {
        "metrics": {
            "accuracy": {
                "value": 0.5,
                "n": 4,
                "denominator": 4,
                "ci95": [0.15, 0.85],
                "ci_method": "wilson",
            },
            "macro_f1": {
                "value": 0.4,
                "n": 3,
                "denominator": 4,
                "ci95": [0.1, 0.7],
                "ci_method": "bootstrap",
            },
            "coverage": {"value": 0.75, "n": 3, "denominator": 4},
        },
        "strict": {"accuracy": {"value": 0.25, "n": 4, "denominator": 4, "ci95": [0.05, 0.7]}},
    }
    write_job(tmp_path / "s", "0", "molp2s/gap", "correct", "m1", [1, 0, 1, 0], extra=extra)
    md = write_report(tmp_path / "s").markdown.read_text()
    section = md.split("## Every metric")[1].split("## Models")[0]
    assert (
        "| molp2s/gap | correct | m1 | accuracy * | 0.5000 | [0.1500, 0.8500] | wilson | 4/4 "
        "|  | 0.2500 | [0.0500, 0.7000] | 4/4 |" in section
    )
    # n/denominator in the one meaning: the metric's own n (3 of 4 scored) is over every sample
    # of a run whose 4 answers are ok, so the 4th is "not scored", shown beside it
    assert "| macro_f1 | 0.4000 | [0.1000, 0.7000] | bootstrap | 3/4 | not scored 1 |" in section
    assert "| coverage | 0.7500 |  |  | 3/4 | not scored 1 |" in section  # no CI: none invented


def test_an_incomplete_run_is_listed_as_such_never_as_a_result(
    sweep: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_job(
        sweep,
        "3_d",
        "molp2s/gap",
        "counterfactual",
        "m1",
        [1, 0, 0, 0],
        statuses={"ok": 1, "error": 3},
        extra={
            "complete": False,
            "incomplete": {"errors": 3, "of": 4, "by_cause": {"connection refused": 3}},
        },
    )
    monkeypatch.setitem(sys.modules, "pygal", None)  # figures: see the next test
    monkeypatch.delitem(sys.modules, "benchreg.core.figures", raising=False)
    monkeypatch.delattr(benchreg.core, "figures", raising=False)
    md = write_report(sweep).markdown.read_text()
    assert "2 of 4 jobs succeeded; 1 incomplete, 1 failed." in md
    did_not_finish = md.split("## Jobs that did not finish")[1].split("##")[0]
    assert "- `3_d`: incomplete: 3 of 4 requests failed (connection refused: 3)" in did_not_finish
    assert "| molp2s/gap | counterfactual | m1 | accuracy | 0.2500 (incomplete) |" in md
    flagged = [line for line in md.splitlines() if line.startswith("| ! | 3_d |")]
    assert len(flagged) == 1 and "| incomplete | 0 | 0 | 0 | 3 |" in flagged[0]
    assert "| molp2s/gap | correct | m1 | accuracy | 0.7500 |" in md  # complete: key absent


def test_an_incomplete_run_is_not_drawn(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pygal")
    from benchreg.core import figures

    write_job(
        sweep, "3_d", "molp2s/gap", "counterfactual", "m1", [0, 0, 0, 0], extra={"complete": False}
    )
    drawn: list[dict] = []
    monkeypatch.setattr(figures, "primary_metric", lambda rows, title: drawn.extend(rows))
    result = write_report(sweep)
    assert drawn and all("counterfactual" not in row["label"] for row in drawn)
    assert any("1 incomplete job not drawn" in note for note in result.notes)
