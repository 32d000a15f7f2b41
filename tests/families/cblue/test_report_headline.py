"""The PromptCBLUE headline counts the tasks a sweep ran and names the split it read (issue 38):
a three-task sweep is "mean of 3 of the 16 tasks", one task is no mean, and a split renamed with
the loader param `split=` is shown as read, not as the view."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).parents[3] / "benchreg" / "families" / "cblue" / "sample"
THREE = "task=cblue/CHIP-CTC,cblue/CMeEE-V2,cblue/KUAKE-QIC"


def sweep(tmp_path: Path, *overrides: str) -> tuple[Path, str]:
    out = tmp_path / "sweep"
    proc = subprocess.run(
        [sys.executable, "-m", "benchreg", "-m", *overrides, f"hydra.sweep.dir={out}"],
        cwd=tmp_path,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, " ".join(proc.stdout.split())


def test_three_tasks_are_the_mean_of_three(tmp_path: Path) -> None:
    _, shown = sweep(tmp_path, THREE)
    assert "mean of 3 of the 16 tasks: not the overall 0.3333" in shown
    assert "3/16 tasks" in shown


def test_one_task_among_other_families_is_no_mean(tmp_path: Path) -> None:
    out, shown = sweep(tmp_path, "task=cblue/CHIP-CTC,molp2s/gap,reaction_mc/single_varying")
    assert "1 of the 16 tasks: no overall 1/16 tasks" in shown
    assert "mean of 1" not in shown
    markdown = (out / "analysis_cblue_overall.md").read_text("utf-8")
    assert "1 of the 16 tasks: no overall" in markdown


def test_a_renamed_split_is_shown_as_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(SAMPLE / "dev.json", root / "renamed.json")
    shutil.copy(SAMPLE / "dev_structured.json", root / "renamed_structured.json")
    out, shown = sweep(tmp_path, THREE, f"roots.cblue={root}", "task.loader.params.split=renamed")
    assert "(baseline:cblue_trivial, split renamed.json, read for view dev)" in shown
    assert "view dev)" not in shown.replace("read for view dev)", "")
    analysis = json.loads((out / "analysis_cblue_overall.json").read_text("utf-8"))
    assert analysis["groups"][0]["split"] == "renamed"
    page = (out / "report" / "index.html").read_text("utf-8")
    assert "split renamed.json, read for view dev" in page


def test_the_default_split_is_the_view(tmp_path: Path) -> None:
    out, shown = sweep(tmp_path, THREE)
    assert "(baseline:cblue_trivial, view dev)" in shown and "split" not in shown.split("====")[0]
    analysis = json.loads((out / "analysis_cblue_overall.json").read_text("utf-8"))
    assert analysis["groups"][0]["split"] == "dev"
