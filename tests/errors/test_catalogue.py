"""Every bad input of the catalogue (tests/errors/cases.py) ends with exit code 2, exactly one
error line that names the place, no traceback, and every earlier output untouched. Most cases run
in-process; a representative subset also runs through the real command line (marked slow)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.errors.cases import CASES, Case
from tests.errors.harness import Outcome, run_cli, run_in_process, snapshot

IDS = [f"{c.klass}: {c.id}" for c in CASES]
CLI_SUBSET = {
    "run options: run.limit=abc",
    "run options: run.progress=no",
    "hydra: unknown model option",
    "hydra: unknown group",
    "hydra: bracket syntax",
    "task entry: billion laughs",
    "task entry: duplicate key",
    "task entry: data escapes with ..",
    "data file: malformed JSON line",
    "predictions file: wrong split ids",
    "output folder: run dir is a file",
    "secrets: secret model.api_key=sk-abcdefghijklmnopqrstuvwx",
    "task name: task=molp2s/gapp",
    "analyze: analyze a file",
}


def check(c: Case, outcome: Outcome, before: dict[str, str], ws: Path) -> None:
    text = outcome.text
    assert "Traceback" not in text, text
    assert outcome.code == 2, f"exit {outcome.code}: {text}"
    errors = outcome.error_lines()
    assert len(errors) == 1, f"expected one error line, got {len(errors)}: {text}"
    assert re.search(c.where, errors[0]), f"the error does not name {c.where!r}: {errors[0]}"
    after = snapshot(ws)
    changed = [p for p, digest in before.items() if after.get(p) != digest]
    assert not changed, f"earlier outputs changed: {changed}"
    new_results = [p for p in after if p not in before and p.endswith("metrics.json")]
    assert not new_results, f"a result was written: {new_results}"


def prepare(c: Case, workspace: Path) -> tuple[list[str], dict[str, str], dict[str, str]]:
    if c.setup is not None:
        c.setup(workspace)
    env = {k: v.replace("{ws}", str(workspace)) for k, v in c.env.items()}
    return c.argv(workspace), env, snapshot(workspace)


KNOWN_GAPS: dict[str, str] = {}  # case name -> why it fails today (none left)


def _marked(c: Case, name: str) -> object:
    if name in KNOWN_GAPS:
        return pytest.param(c, id=name, marks=pytest.mark.xfail(reason=KNOWN_GAPS[name]))
    return pytest.param(c, id=name)


@pytest.mark.parametrize("c", [_marked(c, i) for c, i in zip(CASES, IDS, strict=True)])
def test_bad_input_is_one_located_line(c: Case, workspace: Path) -> None:
    argv, env, before = prepare(c, workspace)
    check(c, run_in_process(argv, workspace, env), before, workspace)


@pytest.mark.slow
@pytest.mark.parametrize(
    "c",
    [c for c, i in zip(CASES, IDS, strict=True) if i in CLI_SUBSET],
    ids=[i for i in IDS if i in CLI_SUBSET],
)
def test_bad_input_through_the_real_cli(c: Case, workspace: Path) -> None:
    argv, env, before = prepare(c, workspace)
    check(c, run_cli(argv, workspace, env), before, workspace)


def test_the_catalogue_is_large_and_covers_every_class() -> None:
    assert len(CASES) >= 150
    assert len(set(IDS)) == len(IDS)
    assert {c.klass for c in CASES} >= {
        "run options",
        "model options",
        "app options",
        "task name",
        "hydra",
        "secrets",
        "task entry",
        "data file",
        "predictions file",
        "output folder",
        "analyze",
    }


@pytest.mark.slow
def test_help_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        f"{sys.executable} -m benchreg --help | head -1",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.stdout.startswith("benchreg")
