"""`python -m benchreg leaderboard`: two real sweeps with different models, and copies of their
run folders edited into the cases a lab meets (an incomplete run, other data, a rerun, a damaged
folder, a model built to differ from the reference and one built identical)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from benchreg.app.commands import main
from tests.app.conftest import run_cli

CF = "molp2s/gap [counterfactual] accuracy"


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Sweep A: the RDKit baseline; sweep B: random(seed=0); both on gap, two views."""
    root = tmp_path_factory.mktemp("sweeps")
    found = []
    for name, model in (("A", "baseline"), ("B", "random")):
        folder = root / name
        done = run_cli(
            "-m",
            "task=molp2s/gap",
            "view=counterfactual,correct",
            f"model={model}",
            f"hydra.sweep.dir={folder}",
            cwd=root,
        )
        assert done.returncode == 0, done.stderr
        found.append(folder)
    return found[0], found[1]


def leaderboard(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["leaderboard", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _job(sweep: Path, view: str) -> Path:
    return next(sweep.glob(f"*_{view}_*"))


def _copy_run(source: Path, target: Path, **metrics_changes: object) -> Path:
    shutil.copytree(source, target)
    path = target / "metrics.json"
    record = json.loads(path.read_text())
    record.update(metrics_changes)
    path.write_text(json.dumps(record))
    return target


def _set(path: Path, key: str, value: object) -> None:
    record = json.loads(path.read_text())
    record[key] = value
    path.write_text(json.dumps(record))


def _rows(out: Path) -> list[dict[str, str]]:
    with (out / "leaderboard.csv").open() as handle:
        return list(csv.DictReader(handle))


def _line_of(text: str, name: str) -> str:
    """The row of ``name`` in every block of the printed table, joined."""
    lines = [line for line in text.splitlines() if line.startswith(name)]
    assert lines, f"no row {name!r}"
    return "  ".join(lines)


def _headings(text: str) -> str:
    return _line_of(text, "model  ")


def test_two_sweeps_list_both_models_with_intervals(sweeps, tmp_path, capsys) -> None:
    code, out, err = leaderboard(capsys, *map(str, sweeps), "--out", str(tmp_path))
    assert code == 0, err
    assert err == ""
    baseline, random_ = _line_of(out, "baseline:molp2s_rdkit"), _line_of(out, "random(seed=0)")
    assert "0.2500 [0.1119, 0.4687] 20/20" in baseline  # counterfactual: 5 of 20
    assert "0.3125 [0.1416, 0.5560] 16/16" in baseline  # correct: 5 of 16
    assert "0.0625 [0.0111, 0.2833] 16/16" in random_
    header = _headings(out)
    assert "molp2s/gap [correct] accuracy @" in header and f"{CF} @" in header
    for name in ("leaderboard.html", "leaderboard.md", "leaderboard.csv"):
        assert (tmp_path / name).is_file()
    page = (tmp_path / "leaderboard.html").read_text()
    assert "0.3125 [0.1416, 0.5560] 16/16" in page and "http" not in page.lower()
    assert "0.0625 [0.0111, 0.2833] 16/16" in (tmp_path / "leaderboard.md").read_text()
    rows = _rows(tmp_path)
    assert {r["model"] for r in rows} == {"baseline:molp2s_rdkit", "random(seed=0)"}
    assert all(r["state"] == "result" and r["ci95_lo"] and r["denominator"] for r in rows)


def test_an_incomplete_run_is_shown_as_such_not_as_a_number(sweeps, tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    _copy_run(
        _job(sweeps[0], "counterfactual"),
        runs / "x",
        model="other",
        model_id="other",
        complete=False,
        incomplete={"errors": 3, "of": 20},
    )
    code, out, _ = leaderboard(capsys, str(runs), "--out", str(tmp_path))
    assert code == 0
    row = _line_of(out, "other")
    assert "incomplete" in row and "0.2500" not in row and "[" not in row
    assert "3 of 20 requests failed" in out
    (cell,) = _rows(tmp_path)
    assert cell["state"] == "incomplete" and cell["value"] == "" and cell["ci95_lo"] == ""


def test_other_data_never_shares_a_column(sweeps, tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    source = _job(sweeps[0], "counterfactual")
    record = json.loads((source / "metrics.json").read_text())
    other_data = {"data/gap/counterfactual.jsonl": "f" * 64}
    _copy_run(source, runs / "a")
    _copy_run(source, runs / "b", sha256={**record["sha256"], "data": other_data})
    code, out, _ = leaderboard(capsys, str(runs), "--out", str(tmp_path))
    assert code == 0
    header = _headings(out)
    assert header.count(CF) == 2
    assert "data/gap/counterfactual.jsonl (ffffffffffff)" in out  # the footnote names the data
    assert len({r["data_digest"] for r in _rows(tmp_path)}) == 2


def test_a_rerun_is_one_cell_the_newest_shown_the_older_counted(sweeps, tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    source = _job(sweeps[0], "counterfactual")
    _copy_run(source, runs / "old")
    metric = json.loads((source / "metrics.json").read_text())["metrics"]
    newer = dict(metric["accuracy"], value=0.3)
    _copy_run(source, runs / "new", metrics={"accuracy": newer})
    _set(runs / "new" / "provenance.json", "created", "2999-01-01T00:00:00+00:00")
    code, out, _ = leaderboard(capsys, str(runs), "--out", str(tmp_path))
    assert code == 0
    row = _line_of(out, "baseline:molp2s_rdkit")
    assert "0.3000 [0.1119, 0.4687] 20/20 (+1 older)" in row and "0.2500" not in row
    (cell,) = _rows(tmp_path)
    assert cell["older_runs"] == "1" and cell["run_folder"].endswith("new")


def test_a_damaged_folder_is_one_warning_and_the_rest_is_used(sweeps, tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(sweeps[0], runs / "A")
    damaged = _job(runs / "A", "correct") / "metrics.json"
    damaged.write_text('{"task": "molp2s/gap", ')
    missing_key = _copy_run(_job(sweeps[1], "correct"), runs / "B")
    record = json.loads((missing_key / "metrics.json").read_text())
    del record["primary"]
    (missing_key / "metrics.json").write_text(json.dumps(record))
    code, out, err = leaderboard(capsys, str(runs), "--out", str(tmp_path))
    assert code == 0
    warnings = err.splitlines()
    assert len(warnings) == 2 and all(w.startswith("warning: ") for w in warnings)
    assert str(damaged) in err and str(missing_key / "metrics.json") in err
    assert "3 finished runs under" in out and "1 shown, 2 skipped (damaged" in out
    assert "0.2500 [0.1119, 0.4687] 20/20" in _line_of(out, "baseline:molp2s_rdkit")
    assert "correct" not in _headings(out)  # both runs of that view were damaged


def test_failed_runs_are_counted_not_shown(sweeps, tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(sweeps[0], runs / "A")
    failed = runs / "failed"
    failed.mkdir()
    (failed / "error.json").write_text('{"error": "bad input"}')
    (failed / "run.json").write_text("{}")
    code, out, _ = leaderboard(capsys, str(runs), "--out", str(tmp_path))
    assert code == 0
    assert "2 finished runs under" in out and "1 failed run (error.json) not shown" in out


def _strong_copy(source: Path, target: Path) -> Path:
    """A model that answers every sample right (20 of 20 against the reference's 5)."""
    _copy_run(source, target, model="strong", model_id="strong")
    samples = target / "samples.jsonl"
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    samples.write_text("".join(json.dumps({**r, "score": 1.0}) + "\n" for r in rows))
    return target


def test_ref_marks_a_strong_difference_not_an_identical_model(sweeps, tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    source = _job(sweeps[0], "counterfactual")
    _copy_run(source, runs / "ref")
    _copy_run(source, runs / "twin", model="twin", model_id="twin")
    _strong_copy(source, runs / "strong")
    code, out, err = leaderboard(
        capsys, str(runs), "--out", str(tmp_path), "--ref", "baseline:molp2s_rdkit"
    )
    assert code == 0, err
    assert _line_of(out, "strong").endswith("▲")
    assert "▲" not in _line_of(out, "twin") and "▼" not in _line_of(out, "twin")
    assert "(reference)" in _line_of(out, "baseline:molp2s_rdkit")
    assert "Holm-corrected across the 2 tests of the table" in out
    by_model = {r["model"]: r for r in _rows(tmp_path)}
    assert by_model["strong"]["vs_reference"] == "higher"
    assert float(by_model["strong"]["p_holm"]) < 0.001
    assert by_model["twin"]["vs_reference"] == "no difference shown"
    assert float(by_model["twin"]["p_holm"]) == 1.0


def test_task_and_model_filters(sweeps, tmp_path, capsys) -> None:
    code, out, _ = leaderboard(
        capsys, *map(str, sweeps), "--out", str(tmp_path), "--model", "random*"
    )
    assert code == 0
    assert "random(seed=0)" in out and "baseline:molp2s_rdkit" not in out
    code, out, err = leaderboard(
        capsys, *map(str, sweeps), "--out", str(tmp_path), "--task", "cblue/*"
    )
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("error: no run of the 4 finished runs")


def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path, capsys) -> None:
    empty = tmp_path / "empty"
    (empty / "nested").mkdir(parents=True)
    out = tmp_path / "out"
    for folder in (tmp_path / "missing", empty):
        code, printed, err = leaderboard(capsys, str(folder), "--out", str(out))
        assert code == 2 and printed == ""
        assert len(err.splitlines()) == 1 and err.startswith("error: ")
        assert str(folder) in err
    assert not out.exists()


def test_refuses_to_overwrite_a_file_that_is_no_leaderboard(sweeps, tmp_path, capsys) -> None:
    mine = tmp_path / "leaderboard.md"
    mine.write_text("# my notes\n")
    code, printed, err = leaderboard(capsys, str(sweeps[0]), "--out", str(tmp_path))
    assert (
        code == 2
        and printed == ""
        and "refusing to overwrite" in err
        and len(err.splitlines()) == 1
    )
    assert mine.read_text() == "# my notes\n"
    assert not (tmp_path / "leaderboard.html").exists()
    mine.unlink()
    assert leaderboard(capsys, str(sweeps[0]), "--out", str(tmp_path))[0] == 0
    assert leaderboard(capsys, str(sweeps[0]), "--out", str(tmp_path))[0] == 0  # its own files


@pytest.mark.parametrize(
    ("change", "shown"),
    [
        ({"counts": {"demonstration_entries": 20}}, "demo: not a benchmark result"),
        ({"benchmark_result": False, "not_a_result": "void root"}, "not a benchmark result"),
        ({"metrics": {"accuracy": {"value": 0.25, "n": 0, "denominator": 0}}}, "not testable"),
    ],
)
def test_runs_that_are_no_result_are_words_not_numbers(
    sweeps, tmp_path, capsys, change, shown
) -> None:
    runs = tmp_path / "runs"
    _copy_run(_job(sweeps[0], "counterfactual"), runs / "x", **change)
    code, out, _ = leaderboard(capsys, str(runs), "--out", str(tmp_path))
    assert code == 0
    row = _line_of(out, "baseline:molp2s_rdkit")
    assert row.split("  ")[-1].strip() == shown and "0.25" not in row
    (cell,) = _rows(tmp_path)
    assert cell["state"] == shown and cell["value"] == "" and cell["n"] == ""


def test_any_nesting_and_a_folder_given_twice_are_read_once(sweeps, tmp_path, capsys) -> None:
    parent = tmp_path / "outputs" / "2026-12-07"
    parent.mkdir(parents=True)
    (parent / "sweep-A").symlink_to(sweeps[0], target_is_directory=True)
    (parent / "again").symlink_to(sweeps[0], target_is_directory=True)
    (parent / "loop").symlink_to(tmp_path / "outputs", target_is_directory=True)
    code, out, _ = leaderboard(
        capsys, str(tmp_path / "outputs"), str(sweeps[0]), "--out", str(tmp_path)
    )
    assert code == 0
    assert "older)" not in _line_of(out, "baseline")  # no run counted as an older run of itself
    assert [r["older_runs"] for r in _rows(tmp_path)] == ["0", "0"]


def test_the_command_as_a_user_runs_it_writes_into_the_current_folder(sweeps, tmp_path) -> None:
    done = run_cli("leaderboard", *map(str, sweeps), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "0.0625 [0.0111, 0.2833] 16/16" in _line_of(done.stdout, "random(seed=0)")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "leaderboard.csv",
        "leaderboard.html",
        "leaderboard.md",
    ]
    missing = run_cli("leaderboard", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr


def test_the_printed_table_is_cut_into_blocks_that_fit_the_terminal(
    sweeps, tmp_path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = leaderboard(capsys, *map(str, sweeps), "--out", str(tmp_path))
    assert code == 0
    table = out.split("\n  ")[0].splitlines()  # the footnotes start indented
    assert sum(line.startswith("model  ") for line in table) == 2  # one block per view
    assert max(len(line) for line in table) <= 80
    assert "0.2500 [0.1119, 0.4687] 20/20" in _line_of(out, "random(seed=0)")
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = leaderboard(capsys, *map(str, sweeps), "--out", str(tmp_path))
    assert sum(line.startswith("model  ") for line in out.splitlines()) == 1


@pytest.mark.slow
def test_a_real_incomplete_run_is_shown_as_incomplete(sweeps, tmp_path, capsys) -> None:
    """A model server that dies after one answer: the run ends with `complete: false`."""
    from tests.app.test_incomplete import FAST, DyingServer

    server = DyingServer(lifetime_s=120)
    server.alive_for = 1
    with server.running():
        done = run_cli(
            "task=molp2s/gap",
            "view=counterfactual",
            "model=openai",
            f"model.base_url={server.base_url}",
            "model.model=fake",
            "run.limit=4",
            f"run.cache_dir={tmp_path / 'cache'}",
            f"hydra.run.dir={tmp_path / 'runs' / 'dying'}",
            *FAST,
            cwd=tmp_path,
        )
    assert done.returncode == 2, done.stderr[-2000:]
    metrics = json.loads((tmp_path / "runs" / "dying" / "metrics.json").read_text())
    assert metrics["complete"] is False
    value = f"{metrics['metrics']['accuracy']['value']:.4f}"
    code, out, _ = leaderboard(
        capsys, str(tmp_path / "runs"), str(sweeps[0]), "--out", str(tmp_path / "board")
    )
    assert code == 0
    row = next(line for line in out.splitlines() if "fake" in line and not line.startswith("  "))
    assert row.split("  ")[-1].strip() == "incomplete" and value not in row
    assert "3 of 4 requests failed" in out
    cells = {r["model"]: r for r in _rows(tmp_path / "board")}
    assert any(r["state"] == "incomplete" and r["value"] == "" for r in cells.values())
    assert "0.2500 [0.1119, 0.4687] 20/20" in _line_of(out, "baseline:molp2s_rdkit")


def test_two_identities_of_one_shown_name_are_two_rows(sweeps, tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    source = _job(sweeps[0], "counterfactual")
    for digit in "ab":
        identity = f"predictions:sha256={digit * 64}"
        _copy_run(source, runs / digit, model="predictions:results.json", model_id=identity)
    code, out, _ = leaderboard(capsys, str(runs), "--out", str(tmp_path))
    assert code == 0
    assert "predictions:results.json [aaaaaaaa]" in out
    assert "predictions:results.json [bbbbbbbb]" in out
    assert "older" not in _line_of(out, "predictions:results.json")
    assert {r["model_id"] for r in _rows(tmp_path)} == {
        f"predictions:sha256={'a' * 64}",
        f"predictions:sha256={'b' * 64}",
    }


def test_an_out_folder_that_cannot_be_made_is_one_line(sweeps, tmp_path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    code, out, err = leaderboard(capsys, str(sweeps[0]), "--out", str(blocker / "board"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "cannot write the leaderboard" in err and "--out DIR" in err
