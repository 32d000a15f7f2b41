"""`python -m benchreg --version`, `--help` and `tasks` (text, --json, --check), in-process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

import benchreg
from benchreg.__main__ import main as entry_main
from benchreg.app.commands import COMMANDS, build_parser
from benchreg.app.commands import main as command_main
from benchreg.core.entries import list_tasks

BAD_COMPONENT = """\
defaults:
  - /task/_base/molp2s@_here_
  - _self_
name: mine/typo
description: an entry that names a parser nothing registers
data: [data/gap]
parser: {name: molp2s_jsonn}
"""


def test_version(monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "argv", ["benchreg", "--version"])
    with pytest.raises(SystemExit) as info:
        entry_main()
    assert info.value.code == 0
    assert capsys.readouterr().out == f"benchreg {benchreg.__version__}\n"


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_printed_without_hydra(monkeypatch, capsys, flag) -> None:
    monkeypatch.setattr(sys, "argv", ["benchreg", flag])
    with pytest.raises(SystemExit) as info:
        entry_main()
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "python -m benchreg tasks" in out and "== Configuration groups ==" in out
    assert "model: baseline, " in out and "run:\n  batch_size: 64" in out


def test_help_imports_neither_hydra_nor_a_family() -> None:
    code = (
        "import sys, io, contextlib\n"
        "sys.argv = ['benchreg', '--help']\n"
        "from benchreg.__main__ import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try: main()\n"
        "    except SystemExit: pass\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('hydra', 'omegaconf')"
        " or m.startswith('benchreg.families.')]\n"
        "print(loaded)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_every_subcommand_has_one_parser_and_one_handler() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == {*COMMANDS, "import"}
    args = parser.parse_args(["compare", "a", "b", "--seed", "3"])
    assert (args.command, args.sweep_b.name, args.seed) == ("compare", "b", 3)


def tasks_json(capsys, *args: str) -> list[dict]:
    assert command_main(["tasks", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_tasks_json_lists_every_entry_from_its_spec(capsys) -> None:
    rows = {row["name"]: row for row in tasks_json(capsys)}
    assert sorted(rows) == list_tasks()
    gap = rows["molp2s/gap"]
    assert gap["status"] == "ok" and gap["family"] == "molp2s" and gap["description"]
    assert gap["default_view"] == "correct" and "counterfactual" in gap["views"]
    assert "samples" not in gap  # counted by --check only
    assert rows["cblue/CMeIE"]["aliases"] == ["cblue/CMeIE-V2"]
    assert all(row["status"] == "ok" for row in rows.values())


def test_tasks_lists_without_importing_a_family() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from benchreg.app.commands import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['tasks'])\n"
        "print([m for m in sys.modules if m.startswith('benchreg.families.')])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_tasks_check_counts_the_samples_of_every_entry(capsys) -> None:
    rows = {row["name"]: row for row in tasks_json(capsys, "--check")}
    assert sorted(rows) == list_tasks()
    assert rows["molp2s/gap"]["samples"] == 16
    assert all(row["status"] == "ok" and row["samples"] > 0 for row in rows.values())


def test_tasks_flags_a_broken_user_entry_and_lists_the_rest(capsys, user_folder) -> None:
    root = user_folder()
    user_folder("name: mine/bad\ndescription: ${oc.env:HOME}\n", name="mine/bad")
    for check in ([], ["--check"]):
        rows = {row["name"]: row for row in tasks_json(capsys, "--searchpath", str(root), *check)}
        assert rows["mine/my_gap"]["status"] == "ok"
        bad = rows["mine/bad"]
        assert bad["status"] == "broken"
        assert bad["error"].startswith(f"{root}/tasks/mine/bad.yaml:2: interpolation")
        assert rows["molp2s/gap"]["status"] == "ok"
    assert rows["mine/my_gap"]["samples"] == 16


def test_tasks_check_finds_a_component_name_nothing_registers(capsys, user_folder) -> None:
    root = user_folder(BAD_COMPONENT, name="mine/typo")
    plain = {r["name"]: r for r in tasks_json(capsys, "--searchpath", str(root))}
    assert plain["mine/typo"]["status"] == "ok"  # a valid spec: only binding looks names up
    checked = {r["name"]: r for r in tasks_json(capsys, "--searchpath", str(root), "--check")}
    assert checked["mine/typo"]["status"] == "broken"
    assert "molp2s_jsonn" in checked["mine/typo"]["error"]


def test_tasks_accepts_hydra_searchpath_and_env_var(capsys, user_folder, monkeypatch) -> None:
    root = user_folder()
    assert "mine/my_gap" in {
        r["name"] for r in tasks_json(capsys, f"hydra.searchpath=[file://{root}]")
    }
    monkeypatch.setenv("BENCHREG_TASKS_PATH", str(root))
    assert "mine/my_gap" in {r["name"] for r in tasks_json(capsys)}


def test_tasks_table_shows_views_and_broken(capsys, user_folder) -> None:
    root = user_folder("name: [unclosed\n", name="mine/bad")
    assert command_main(["tasks", "--searchpath", str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["task", "family", "views"]
    gap = next(line for line in lines if line.startswith("molp2s/gap "))
    assert gap.split()[1] == "molp2s" and "correct*" in gap
    bad = next(line for line in lines if line.startswith("mine/bad "))
    assert "BROKEN" in bad and "malformed YAML" in bad
    assert lines[-1].startswith(f"{len(list_tasks()) + 1} tasks, 1 broken.")
    assert "tasks --check" in lines[-1]


def test_tasks_check_table_shows_counts(capsys, user_folder) -> None:
    root = user_folder("name: [unclosed\n", name="mine/bad")
    assert command_main(["tasks", "--check", "--searchpath", str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    gap = next(line for line in lines if line.startswith("molp2s/gap "))
    assert gap.split()[1:3] == ["molp2s", "16"] and "correct*" in gap
    bad = next(line for line in lines if line.startswith("mine/bad "))
    assert "BROKEN" in bad and "malformed YAML" in bad
    assert lines[-1].startswith(f"{len(list_tasks()) + 1} tasks, 1 broken.")


def _help_sections(text: str) -> tuple[str, str, str]:
    """A help text cut along its template (conf/config.yaml `hydra.help.template`): the text
    before the config groups, the config groups, and the config."""
    from benchreg.app import help as app_help

    template = app_help.app_config()["hydra"]["help"]["template"]
    before, rest = template.split("$APP_CONFIG_GROUPS")
    between, after = rest.split("$CONFIG")
    head, tail = text.split(between)
    assert head.startswith(before), head
    assert tail.endswith(after + "\n")
    return before, head[len(before) :], tail[: -len(after) - 1]


def test_help_says_what_hydra_renders_from_the_same_template(capsys) -> None:
    """`--help` fills in the template Hydra renders (for `--help` with overrides): the same
    text, groups and options, and the same config (with the comments of its files)."""
    from benchreg.app.help import render

    hydra = subprocess.run(
        [sys.executable, "-m", "benchreg", "--help", "model=baseline"],
        capture_output=True,
        text=True,
    )
    assert hydra.returncode == 0, hydra.stderr
    ours = _help_sections(render() + "\n")
    theirs = _help_sections(hydra.stdout)
    assert "${" not in ours[0]  # no interpolation: a composition parses none of the template
    assert ours[1] == theirs[1]
    assert yaml.safe_load(ours[2]) == yaml.safe_load(theirs[2])
    assert "# evaluate only the first N samples" in ours[2]
