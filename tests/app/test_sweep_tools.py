"""`analyze`, `report` and `compare` refuse what is not a sweep (issue 19, item 9): a folder that
does not exist, a file, an empty folder, a single run's folder, a folder of sweeps, and a sweep
with a damaged file (cut, garbage, a list where an object belongs, ...) each give one located
error line on stderr, exit code 2, no traceback, and leave every file as it was."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from benchreg.app.commands import main as command_main
from tests.app.conftest import run_cli

TOOLS = ("analyze", "report", "compare")
JOB = "000_molp2s-gap_correct_baseline"


@pytest.fixture(scope="module")
def real_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real sweep (2 views x 2 models of molp2s/gap) with its summary, analysis and report."""
    root = tmp_path_factory.mktemp("sweep_tools")
    sweep = root / "sweep"
    proc = run_cli(
        "-m",
        "task=molp2s/gap",
        "view=correct,shuffled",
        "model=baseline,random",
        "run.bootstrap=0",
        f"hydra.sweep.dir={sweep}",
        cwd=root,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (sweep / JOB / "metrics.json").is_file() and (sweep / "sweep.json").is_file()
    assert (sweep / "analysis_molp2s_views.json").is_file()
    return sweep


@pytest.fixture
def sweep(real_sweep: Path, tmp_path: Path) -> Path:
    """A fresh copy of the real sweep, to damage."""
    copy = tmp_path / "box" / "sweep"
    shutil.copytree(real_sweep, copy)
    return copy


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (folders as None) with its bytes."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def call(tool: str, target: Path, capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    args = [tool, str(target)]
    rc = command_main(args)
    out, err = capfd.readouterr()
    return rc, out, err


def assert_refused(rc: int, err: str, *expected: str) -> str:
    assert rc == 2
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    (line,) = lines
    assert line.startswith("error: ")
    for text in expected:
        assert text in line, line
    return line


# --- what is not a sweep --------------------------------------------------------------------------


def _missing(sweep: Path) -> Path:
    return sweep.parent / "no_such_sweep"


def _empty(sweep: Path) -> Path:
    (sweep.parent / "empty").mkdir()
    return sweep.parent / "empty"


def _a_file(sweep: Path) -> Path:
    return sweep / "summary.csv"


def _run_folder(sweep: Path) -> Path:
    return sweep / JOB


def _other_folder(sweep: Path) -> Path:
    folder = sweep.parent / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "readme.txt").write_text("hello\n")
    return folder


def _folder_of_sweeps(sweep: Path) -> Path:
    return sweep.parent


NOT_A_SWEEP: dict[str, tuple[Callable[[Path], Path], str]] = {
    "missing": (_missing, "no such folder"),
    "empty": (_empty, "not a sweep folder: an empty folder"),
    "file": (_a_file, "a file, not a sweep folder"),
    "run folder": (_run_folder, "a run folder (it holds metrics.json"),
    "other folder": (_other_folder, "no sweep.json and no job folder with metrics.json"),
    "folder of sweeps": (_folder_of_sweeps, "a folder of 1 sweep folder(s) (sweep)"),
}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case", list(NOT_A_SWEEP))
def test_what_is_not_a_sweep_is_one_error_and_nothing_written(
    tool: str, case: str, sweep: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    make, expected = NOT_A_SWEEP[case]
    target = make(sweep)
    before = snapshot(sweep.parent)
    rc, out, err = call(tool, target, capfd)
    line = assert_refused(rc, err, expected, str(target))
    assert "fix" not in line or "(" in line
    assert snapshot(sweep.parent) == before
    assert out == ""


def test_a_run_folder_names_its_sweep(sweep: Path, capfd: pytest.CaptureFixture[str]) -> None:
    rc, _, err = call("report", sweep / JOB, capfd)
    assert_refused(rc, err, f"pass its sweep folder, {sweep.resolve()};")


# --- damaged files --------------------------------------------------------------------------------


def _cut(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _json(path: Path, change: Callable[[dict], object]) -> None:
    data = json.loads(path.read_text("utf-8"))
    path.write_text(json.dumps(change(data), indent=2) + "\n", encoding="utf-8")


def _set(data: dict, dotted: str, value: object) -> dict:
    *parents, last = dotted.split(".")
    node = data
    for key in parents:
        node = node[key]
    node[last] = value
    return data


def _drop_last_line(path: Path) -> None:
    lines = path.read_text("utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")


def _edit_a_score(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    rows[0]["score"] = 1.0 - rows[0]["score"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00\xff\xfe garbage \x89PNG\r\n")


def _make_failed(sweep: Path, text: str) -> None:
    (sweep / "001_molp2s-gap_correct_random" / "error.json").write_text(text)


M = f"{JOB}/metrics.json"
S = f"{JOB}/samples.jsonl"
P = f"{JOB}/provenance.json"
A = "analysis_molp2s_views.json"

# case -> (damage(sweep), the file the error names, a phrase of the error)
DAMAGE: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "metrics cut": (lambda s: _cut(s / M), M, "malformed JSON"),
    "metrics empty": (lambda s: (s / M).write_text(""), M, "malformed JSON"),
    "metrics garbage": (lambda s: _garbage(s / M), M, "not UTF-8"),
    "metrics a list": (lambda s: (s / M).write_text("[1, 2]\n"), M, "holds a list"),
    "metrics null": (lambda s: (s / M).write_text("null\n"), M, "holds null"),
    "metrics: metrics a list": (
        lambda s: _json(s / M, lambda d: _set(d, "metrics", [])),
        M,
        "`metrics` is a list",
    ),
    "metrics: a metric a string": (
        lambda s: _json(s / M, lambda d: _set(d, "metrics.accuracy", "0.5")),
        M,
        "`metrics.accuracy` is a string",
    ),
    "metrics: value a string": (
        lambda s: _json(s / M, lambda d: _set(d, "metrics.accuracy.value", "high")),
        M,
        "`metrics.accuracy.value` is a string",
    ),
    "metrics: ci95 one number": (
        lambda s: _json(s / M, lambda d: _set(d, "metrics.accuracy.ci95", [0.1])),
        M,
        "ci95",
    ),
    "metrics: primary unknown": (
        lambda s: _json(s / M, lambda d: _set(d, "primary", "f1")),
        M,
        "the primary metric 'f1' is not under `metrics`",
    ),
    "metrics: task missing": (
        lambda s: _json(s / M, lambda d: {k: v for k, v in d.items() if k != "task"}),
        M,
        "`task` is missing",
    ),
    "metrics: statuses a list": (
        lambda s: _json(s / M, lambda d: _set(d, "statuses", [16])),
        M,
        "`statuses` is a list",
    ),
    "metrics: complete a string": (
        lambda s: _json(s / M, lambda d: _set(d, "complete", "no")),
        M,
        "`complete` is a string",
    ),
    "samples cut mid-line": (lambda s: _cut(s / S), S, "malformed JSON"),
    "samples last line dropped": (
        lambda s: _drop_last_line(s / S),
        S,
        "holds 15 rows, metrics.json says the run has 16 samples",
    ),
    "samples edited": (lambda s: _edit_a_score(s / S), S, "does not match the sha256"),
    "samples empty": (lambda s: (s / S).write_text(""), S, "holds 0 rows"),
    "samples garbage": (lambda s: _garbage(s / S), S, "not UTF-8"),
    "samples a line a list": (lambda s: (s / S).write_text("[1, 2]\n"), S, "the line holds a list"),
    "samples missing": (lambda s: (s / S).unlink(), S, "missing"),
    "provenance cut": (lambda s: _cut(s / P), P, "malformed JSON"),
    "provenance a list": (lambda s: (s / P).write_text("[]\n"), P, "holds a list"),
    "provenance: analyses a string": (
        lambda s: _json(s / P, lambda d: _set(d, "task_spec.analyses", "molp2s_views")),
        P,
        "`task_spec.analyses` is a string",
    ),
    "provenance: config a list": (
        lambda s: _json(s / P, lambda d: _set(d, "config", [])),
        P,
        "`config` is a list",
    ),
    "sweep.json cut": (lambda s: _cut(s / "sweep.json"), "sweep.json", "malformed JSON"),
    "sweep.json a list": (
        lambda s: (s / "sweep.json").write_text("[]\n"),
        "sweep.json",
        "holds a list",
    ),
    "sweep.json: a job a string": (
        lambda s: _json(s / "sweep.json", lambda d: _set(d, "jobs", ["task=molp2s/gap"])),
        "sweep.json",
        "`jobs` is a string",
    ),
    "analysis cut": (lambda s: _cut(s / A), A, "malformed JSON"),
    "analysis a list": (lambda s: (s / A).write_text("[]\n"), A, "holds a list"),
    "error.json garbage": (
        lambda s: _make_failed(s, "{not json"),
        "001_molp2s-gap_correct_random/error.json",
        "malformed JSON",
    ),
    "error.json a list": (
        lambda s: _make_failed(s, '["boom"]'),
        "001_molp2s-gap_correct_random/error.json",
        "holds a list",
    ),
}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_file_is_one_located_error_and_nothing_written(
    tool: str, case: str, sweep: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    damage, name, expected = DAMAGE[case]
    damage(sweep)
    before = snapshot(sweep.parent)
    rc, out, err = call(tool, sweep, capfd)
    line = assert_refused(rc, err, str(sweep / name), expected)
    assert line.endswith(")"), line  # the fix, in brackets
    assert snapshot(sweep.parent) == before
    assert out == ""


def test_a_shape_error_names_the_line(sweep: Path, capfd: pytest.CaptureFixture[str]) -> None:
    _json(sweep / M, lambda d: _set(d, "metrics.accuracy.value", "high"))
    text = (sweep / M).read_text("utf-8").splitlines()
    line_no = next(i for i, line in enumerate(text, 1) if '"value": "high"' in line)
    rc, _, err = call("report", sweep, capfd)
    assert_refused(rc, err, f"{sweep / M}:{line_no}:")


def test_the_second_sweep_of_compare_is_checked_too(
    sweep: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    other = sweep.parent / "other"
    shutil.copytree(sweep, other)
    _cut(other / S)
    before = snapshot(sweep.parent)
    rc = command_main(["compare", str(sweep), str(other), "--a", "baseline:molp2s_rdkit"])
    _, err = capfd.readouterr()
    assert_refused(rc, err, str(other / S))
    assert snapshot(sweep.parent) == before


def test_an_intact_sweep_still_works(sweep: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert command_main(["analyze", str(sweep)]) == 0
    assert command_main(["report", str(sweep)]) == 0
    assert command_main(["compare", str(sweep)]) == 0
    _, err = capfd.readouterr()
    assert "error" not in err.lower()
    assert (sweep / "compare" / "compare.json").is_file()
    assert (sweep / "report" / "index.html").is_file()


def test_an_unreadable_output_folder_is_one_error(
    sweep: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    target = sweep.parent / "taken"
    target.write_text("a file\n")
    for tool in ("report", "compare"):
        assert command_main([tool, str(sweep), "--out", str(target)]) == 2
        _, err = capfd.readouterr()
        assert_refused(2, err, str(target))
    assert target.read_text() == "a file\n"


def test_a_usage_error_is_one_line(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        command_main(["report"])
    assert info.value.code == 2
    _, err = capfd.readouterr()
    assert_refused(2, err, "sweep_dir")


@pytest.mark.parametrize("tool", TOOLS)
def test_the_cli_prints_one_line_and_exits_2(tool: str, sweep: Path) -> None:
    """The same through `python -m benchreg` in a subprocess (what a user sees)."""
    _cut(sweep / M)
    before = snapshot(sweep.parent)
    proc = run_cli(tool, str(sweep), cwd=sweep.parent)
    assert_refused(proc.returncode, proc.stderr, f"{sweep / M}:", "malformed JSON")
    assert proc.stdout == ""
    assert snapshot(sweep.parent) == before


def test_done_jobs_counts_what_job_states_calls_ok_or_failed(tmp_path: Path) -> None:
    from benchreg.app.sweepfolder import done_jobs, job_states

    (tmp_path / "000_ok").mkdir()
    (tmp_path / "000_ok" / "metrics.json").write_text(json.dumps({"complete": True}))
    (tmp_path / "001_incomplete").mkdir()
    (tmp_path / "001_incomplete" / "metrics.json").write_text(json.dumps({"complete": False}))
    (tmp_path / "002_failed").mkdir()
    (tmp_path / "002_failed" / "error.json").write_text("{}")
    (tmp_path / "003_running").mkdir()
    (tmp_path / "003_running" / "run.json").write_text("{}")
    (tmp_path / "report").mkdir()
    (tmp_path / ".submitit").mkdir()
    states = job_states(tmp_path)
    assert done_jobs(tmp_path) == sum(j.state in ("ok", "failed") for j in states) == 2
