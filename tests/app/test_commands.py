"""`python -m benchreg --version` and `tasks` (text and --json), in-process."""

from __future__ import annotations

import json
import sys

import pytest

import benchreg
from benchreg.__main__ import main as entry_main
from benchreg.app.commands import main as command_main
from benchreg.core.entries import list_tasks


def test_version(monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "argv", ["benchreg", "--version"])
    with pytest.raises(SystemExit) as info:
        entry_main()
    assert info.value.code == 0
    assert capsys.readouterr().out == f"benchreg {benchreg.__version__}\n"


def tasks_json(capsys, *args: str) -> list[dict]:
    assert command_main(["tasks", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_tasks_json_lists_every_entry_with_its_size(capsys) -> None:
    rows = {row["name"]: row for row in tasks_json(capsys)}
    assert sorted(rows) == list_tasks()
    gap = rows["molp2s/gap"]
    assert gap["status"] == "ok" and gap["family"] == "molp2s"
    assert gap["default_view"] == "correct" and "counterfactual" in gap["views"]
    assert gap["samples"] == 16 and gap["description"]
    assert rows["cblue/CMeIE"]["aliases"] == ["cblue/CMeIE-V2"]
    assert all(row["status"] == "ok" and row["samples"] > 0 for row in rows.values())


def test_tasks_flags_a_broken_user_entry_and_lists_the_rest(capsys, user_folder) -> None:
    root = user_folder()
    user_folder("name: mine/bad\ndescription: ${oc.env:HOME}\n", name="mine/bad")
    rows = {row["name"]: row for row in tasks_json(capsys, "--searchpath", str(root))}
    assert rows["mine/my_gap"]["status"] == "ok" and rows["mine/my_gap"]["samples"] == 16
    bad = rows["mine/bad"]
    assert bad["status"] == "broken"
    assert bad["error"].startswith(f"{root}/tasks/mine/bad.yaml:2: interpolation")
    assert rows["molp2s/gap"]["status"] == "ok"


def test_tasks_accepts_hydra_searchpath_and_env_var(capsys, user_folder, monkeypatch) -> None:
    root = user_folder()
    assert "mine/my_gap" in {
        r["name"] for r in tasks_json(capsys, f"hydra.searchpath=[file://{root}]")
    }
    monkeypatch.setenv("BENCHREG_TASKS_PATH", str(root))
    assert "mine/my_gap" in {r["name"] for r in tasks_json(capsys)}


def test_tasks_table_shows_counts_views_and_broken(capsys, user_folder) -> None:
    root = user_folder("name: [unclosed\n", name="mine/bad")
    assert command_main(["tasks", "--searchpath", str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    gap = next(line for line in lines if line.startswith("molp2s/gap "))
    assert gap.split()[1:3] == ["molp2s", "16"] and "correct*" in gap
    bad = next(line for line in lines if line.startswith("mine/bad "))
    assert "BROKEN" in bad and "malformed YAML" in bad
    assert lines[-1].startswith(f"{len(list_tasks()) + 1} tasks, 1 broken.")
