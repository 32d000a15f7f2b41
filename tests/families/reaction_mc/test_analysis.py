"""Reference-gain analysis over sweep job folders, on a known case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchreg.core import registry
from benchreg.core.analysis import read_jobs


def _job(folder: Path, task: str, model: str, rows: list[tuple[str, float, float]]) -> None:
    folder.mkdir(parents=True)
    metrics = {"task": task, "family": "reaction_mc", "view": None, "model": model}
    (folder / "metrics.json").write_text(json.dumps(metrics))
    (folder / "provenance.json").write_text(json.dumps({}))
    lines = [
        json.dumps({"id": qid, "status": "ok", "score": rel, "answer": 0, "gold": [0],
                    "scores": {"avg_relative_score": rel, "exact_match_accuracy": hit,
                               "avg_yield_ratio": rel}})
        for qid, rel, hit in rows
    ]
    (folder / "samples.jsonl").write_text("\n".join(lines) + "\n")


REF = [("t_q1_ref", 1.0, 1.0), ("t_q2_ref", 0.5, 0.0), ("t_q3_ref", 1.0, 1.0),
       ("t_q4_ref", 0.8, 0.0), ("t_q5_ref", 1.0, 1.0), ("t_q9_ref", 1.0, 1.0)]
CTRL = [("t_q1_ref_control", 0.5, 0.0), ("t_q2_ref_control", 0.5, 0.0),
        ("t_q3_ref_control", 1.0, 1.0), ("t_q4_ref_control", 0.4, 0.0),
        ("t_q5_ref_control", 0.6, 0.0)]


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    _job(tmp_path / "0", "reaction_mc/all_varying_reference", "sysA", REF)
    _job(tmp_path / "1", "reaction_mc/all_varying_reference_control", "sysA", CTRL)
    # a second system where references change nothing
    _job(tmp_path / "2", "reaction_mc/all_varying_reference", "sysB", REF)
    _job(tmp_path / "3", "reaction_mc/all_varying_reference_control", "sysB",
         [(qid + "_control", rel, hit) for qid, rel, hit in REF])
    # ignored: another family, and a reference job without its control
    _job(tmp_path / "4", "molp2s/gap", "sysA", [("r1", 1.0, 1.0)])
    _job(tmp_path / "5", "reaction_mc/single_varying_reference", "sysA", REF)
    return tmp_path


def test_known_case(sweep: Path) -> None:
    from scipy.stats import wilcoxon

    report = registry.analyses.get("reaction_mc_reference_gain")(read_jobs(sweep), n_boot=500)
    stats = report.data["systems"]["sysA"]["all_varying"]
    diffs = [0.5, 0.0, 0.0, 0.4, 0.4]
    assert stats["pairs"] == 5
    assert stats["unpaired_reference"] == 1 and stats["unpaired_control"] == 0
    assert stats["mean_with_reference"] == pytest.approx((1 + 0.5 + 1 + 0.8 + 1) / 5)
    assert stats["mean_without_reference"] == pytest.approx((0.5 + 0.5 + 1 + 0.4 + 0.6) / 5)
    assert stats["mean_difference"] == pytest.approx(sum(diffs) / 5)
    assert stats["wilcoxon_p"] == pytest.approx(wilcoxon(diffs, zero_method="wilcox").pvalue)
    lo, hi = stats["ci95"]
    assert 0.0 <= lo <= stats["mean_difference"] <= hi <= 0.5
    assert (stats["hits_with_reference"], stats["hits_without_reference"]) == (3, 1)
    assert (stats["hit_only_with_reference"], stats["hit_only_without_reference"]) == (2, 0)
    assert stats["mcnemar_p"] == pytest.approx(0.5)  # exact: 2 discordant, both one way
    same = report.data["systems"]["sysB"]["all_varying"]
    assert same["mean_difference"] == 0.0 and same["wilcoxon_p"] == 1.0
    assert same["mcnemar_p"] == 1.0
    assert "single_varying" not in report.data["systems"]["sysA"]
    assert any("single_varying has no control job" in n for n in report.data["notes"])


def test_markdown_table(sweep: Path) -> None:
    report = registry.analyses.get("reaction_mc_reference_gain")(read_jobs(sweep), n_boot=200)
    lines = report.markdown.splitlines()
    row = next(line for line in lines if line.startswith("| sysA | all_varying |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "5" and cells[5] == "0.2600"
    assert "1 reference and 0 control questions without a partner" in report.markdown


def test_no_pairs(tmp_path: Path) -> None:
    _job(tmp_path / "0", "reaction_mc/all_varying", "sysA", [("t_q1", 1.0, 1.0)])
    report = registry.analyses.get("reaction_mc_reference_gain")(read_jobs(tmp_path))
    assert report.data["systems"] == {}
    assert "no reference/control job pairs found" in report.markdown


def test_same_model_on_two_roots_is_two_systems(tmp_path: Path) -> None:
    for i, root in enumerate(("/data/a", "/data/b")):
        for j, (task, rows) in enumerate((("all_varying_reference", REF),
                                          ("all_varying_reference_control", CTRL))):
            folder = tmp_path / f"{i}{j}"
            _job(folder, f"reaction_mc/{task}", "sysA", rows)
            (folder / "provenance.json").write_text(json.dumps({"data_root": root}))
    report = registry.analyses.get("reaction_mc_reference_gain")(read_jobs(tmp_path), n_boot=50)
    assert sorted(report.data["systems"]) == ["sysA @ /data/a", "sysA @ /data/b"]
