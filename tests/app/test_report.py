"""`benchreg report`: files, counts table, the markdown-only fallback without matplotlib, and
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
        "model_id": model,
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
    pytest.importorskip("matplotlib")
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


def test_without_matplotlib_the_markdown_says_how_to_install(
    sweep: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
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
    pytest.importorskip("matplotlib")
    (sweep / "analysis_molp2s_views.json").write_text(json.dumps({"models": {"m1": [1, 2]}}))
    result = write_report(sweep)
    assert any("molp2s figure skipped" in note for note in result.notes)
    assert result.html.is_file()
