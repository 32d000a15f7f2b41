"""The catalogue's last faults (issue 37, item 7): a key typed where the variable name belongs,
`view --out` onto a run's own file, an export `--out` that is a file; each one line, exit 2,
nothing written or overwritten, no secret written."""

from __future__ import annotations

from pathlib import Path

import pytest

# the form of a variable name (underscores, no sk- prefix), so only "names no variable set" stops it
TYPED_KEY = "gsk_Q7abcdefGHIJ0123klmnOPQR4567"


def _holds(tmp_path: Path, text: str) -> list[Path]:
    return [
        path
        for path in tmp_path.rglob("*")
        if text in str(path) or (path.is_file() and text.encode() in path.read_bytes())
    ]


@pytest.mark.slow
@pytest.mark.parametrize("sweep", [False, True])
def test_a_key_in_the_name_of_its_variable_is_refused_before_anything_is_written(
    cli, tmp_path: Path, sweep: bool
) -> None:
    args = [
        "task=molp2s/gap",
        "model=openai",
        "model.model=x",
        f"model.api_key_env={TYPED_KEY}",
        f"hydra.run.dir={tmp_path / 'run'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]
    proc = cli(*(["-m", *args] if sweep else args), env={TYPED_KEY: ""})
    assert proc.returncode == 2, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "must name an environment variable" in errors[0], proc.stderr
    assert "not shown" in errors[0]
    assert TYPED_KEY not in proc.stdout + proc.stderr
    assert not (tmp_path / "run").exists() and not (tmp_path / "sweep").exists()
    assert _holds(tmp_path, TYPED_KEY) == []


def test_an_unset_variable_is_named_only_when_it_has_the_form_of_a_name(monkeypatch) -> None:
    from benchreg.app.errors import reject_secret_overrides
    from benchreg.core.errors import BenchregError

    monkeypatch.delenv("BENCHREG_UNSET_VAR", raising=False)
    monkeypatch.setenv("BENCHREG_SET_VAR", "k")
    reject_secret_overrides(["-m", "model.api_key_env=BENCHREG_SET_VAR,null"])
    with pytest.raises(BenchregError) as named:
        reject_secret_overrides(["model.api_key_env=BENCHREG_UNSET_VAR"])
    assert "environment variable BENCHREG_UNSET_VAR (model.api_key_env) is not set" in str(
        named.value
    )
    for typed in (TYPED_KEY, "sk_live_abc", "abcdEFGH1234", "KEY_ABCD1234EFGH"):
        with pytest.raises(BenchregError) as hidden:
            reject_secret_overrides(["-m", f"model.api_key_env=BENCHREG_SET_VAR,{typed}"])
        assert typed not in str(hidden.value) + str(hidden.value.fix)
        assert "not shown" in str(hidden.value)


def test_view_out_never_replaces_a_file_it_did_not_write(tmp_path: Path, capsys) -> None:
    from benchreg.app.commands import main as command_main
    from tests.app.test_report import write_job

    sweep = tmp_path / "sweep"
    run = write_job(sweep, "000_a", "molp2s/gap", "correct", "m1", [1, 0])
    metrics = (run / "metrics.json").read_bytes()
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    for out in (run / "metrics.json", run / "page.html", mine, tmp_path):
        assert command_main(["view", str(run), "--out", str(out)]) == 2, out
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(err) == 1 and "--out" in err[0], err
    assert (run / "metrics.json").read_bytes() == metrics and mine.read_text() == "mine"
    assert not (run / "page.html").exists()
    page = tmp_path / "page.html"
    assert command_main(["view", str(run), "--out", str(page)]) == 0
    assert command_main(["view", str(run), "--out", str(page)]) == 0  # its own page: remade
    assert capsys.readouterr().out.strip().endswith("page.html")


def test_an_export_out_that_is_a_file_is_one_line(tmp_path: Path, capsys) -> None:
    from benchreg.families.retrieval.export import main as export_main

    out = tmp_path / "mine.txt"
    out.write_text("mine")
    args = ["--root", str(tmp_path), "--task", "retrieval/pdf", "--out", str(out)]
    assert export_main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out is an existing file" in err[0], err
    assert out.read_text() == "mine"


@pytest.mark.parametrize("link", ["sets", "corpus", "corpus/conversation", "sets/locomo.jsonl"])
def test_import_never_writes_through_a_link_out_of_the_data_root(
    tmp_path: Path, capsys, link: str
) -> None:
    from benchreg.app.commands import main as command_main
    from tests.families.retrieval.test_importers import locomo

    locomo(tmp_path / "src")
    root, outside = tmp_path / "root", tmp_path / "outside"
    outside.mkdir()
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    target = outside / "file.jsonl" if link.endswith(".jsonl") else outside
    (root / link).symlink_to(target)
    args = ["import", "locomo", "--src", str(tmp_path / "src"), "--out", str(root)]
    assert command_main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "leads outside the data root" in err[0], err
    assert list(outside.iterdir()) == []
    assert not (root / ".import-locomo.tmp").exists()


def test_a_config_files_unset_variable_is_named_only_when_it_has_the_form_of_a_name(
    monkeypatch,
) -> None:
    from benchreg.core.errors import BenchregError
    from benchreg.systems.openai import api_key_from_env

    monkeypatch.delenv(TYPED_KEY, raising=False)
    monkeypatch.delenv("BENCHREG_UNSET_VAR", raising=False)
    with pytest.raises(BenchregError) as hidden:
        api_key_from_env(TYPED_KEY)
    assert TYPED_KEY not in str(hidden.value) + str(hidden.value.fix)
    with pytest.raises(BenchregError) as named:
        api_key_from_env("BENCHREG_UNSET_VAR")
    assert "environment variable BENCHREG_UNSET_VAR (model.api_key_env) is not set" in str(
        named.value
    )
