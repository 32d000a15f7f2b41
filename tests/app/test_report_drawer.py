"""The sweep's figure process (benchreg.app.report.drawer): the same figures as drawn in-process,
and the in-process drawing whenever the process cannot give them."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from benchreg.app.report import _figures, read_sweep, write_report
from benchreg.app.report.drawer import FigureDrawer
from tests.app.test_report import write_job

pytest.importorskip("matplotlib")


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    root = tmp_path / "sweep"
    write_job(root, "0_a", "molp2s/gap", "correct", "m1", [1, 0, 1, 1])
    write_job(root, "1_b", "molp2s/gap", "shuffled", "m1", [0, 0, 1, 0])
    write_job(root, "2_c", "cblue/CMeIE", "default", "m1", [0.5, 0.25, 1.0])
    return root


def test_the_drawer_draws_what_the_report_draws_in_process(sweep: Path) -> None:
    drawer = FigureDrawer()
    drawer.start()
    assert drawer.started
    notes: list[str] = []
    drawn = drawer.figures(sweep, notes)
    expected_notes: list[str] = []
    expected = _figures(sweep, read_sweep(sweep), expected_notes)
    assert drawn is not None and set(drawn) == {"primary_molp2s", "primary_cblue"}
    assert drawn == expected and notes == expected_notes
    assert not drawer.started  # one request per process


def test_a_report_with_the_drawer_is_the_report_without_it(sweep: Path, tmp_path: Path) -> None:
    drawer = FigureDrawer()
    drawer.start()
    with_drawer = write_report(sweep, tmp_path / "a", drawer=drawer)
    without = write_report(sweep, tmp_path / "b")
    for name in ("index.html", "report.md"):
        assert (with_drawer.out_dir / name).read_bytes() == (without.out_dir / name).read_bytes()
    assert [p.name for p in with_drawer.figures] == [p.name for p in without.figures]


def test_a_drawer_that_died_leaves_the_drawing_to_the_report(sweep: Path, tmp_path: Path) -> None:
    drawer = FigureDrawer()
    drawer.start()
    drawer._process.kill()  # type: ignore[union-attr]
    assert drawer.figures(sweep, []) is None
    drawer.start()
    drawer._process.kill()  # type: ignore[union-attr]
    result = write_report(sweep, tmp_path / "r", drawer=drawer)
    assert [p.name for p in result.figures] == ["primary_cblue.svg", "primary_molp2s.svg"]


def test_a_drawer_that_does_not_answer_in_time_is_stopped(sweep: Path) -> None:
    drawer = FigureDrawer()
    drawer.start()
    process = drawer._process
    assert process is not None
    started = time.monotonic()
    assert drawer.figures(sweep, [], timeout=0.001) is None
    assert time.monotonic() - started < 30
    assert process.poll() is not None  # killed, not left running


def test_the_drawer_ends_when_its_sweep_closes_the_pipe() -> None:
    drawer = FigureDrawer()
    drawer.start()
    process = drawer._process
    assert process is not None and process.stdin is not None
    process.stdin.close()
    assert process.wait(timeout=120) == 0
    assert process.stdout is not None and process.stdout.read() == ""
    drawer.stop()


def test_a_sweep_folder_the_drawer_cannot_read_is_an_error_reply(tmp_path: Path) -> None:
    drawer = FigureDrawer()
    drawer.start()
    process = drawer._process
    assert process is not None
    out, _ = process.communicate(json.dumps({"sweep_dir": str(tmp_path / "none")}) + "\n", 120)
    assert "error" in json.loads(out) and process.returncode == 1
