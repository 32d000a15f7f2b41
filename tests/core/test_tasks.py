"""Loading task entries from YAML without Hydra: composition and located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.tasks import list_tasks, load_task

ENTRY = """\
defaults:
  - /task/_base/molp2s@_here_
  - _self_
name: mine/t1
description: a task of my own
data: [data/gap]
"""


def write(folder: Path, text: str, name: str = "mine/t1") -> Path:
    path = folder / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_all_builtin_entries_validate() -> None:
    names = list_tasks()
    assert len([n for n in names if n.startswith("molp2s/")]) == 15
    for name in names:
        assert load_task(name).name == name


def test_base_is_merged_and_not_listed() -> None:
    spec = load_task("molp2s/electronic")
    assert spec.family == "molp2s"
    assert spec.prompt is not None
    assert spec.prompt.templates["system"] == "property_bundle_system.txt"
    assert not any(n.startswith("_base") for n in list_tasks())


def test_user_folder_entry_loads(tmp_path: Path) -> None:
    write(tmp_path, ENTRY)
    assert load_task("mine/t1", [tmp_path]).data == ["data/gap"]


def test_unknown_key_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, ENTRY + "colour: blue\n")
    with pytest.raises(BenchregError) as info:
        load_task("mine/t1", [tmp_path])
    assert info.value.where == f"{path}:7"
    assert "unknown key 'colour'" in info.value.what


def test_unknown_nested_key_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, ENTRY + "loader:\n  name: molp2s\n  parms: {}\n")
    with pytest.raises(BenchregError) as info:
        load_task("mine/t1", [tmp_path])
    assert info.value.where == f"{path}:9"


def test_unknown_metric_names_file_line_and_nearest(tmp_path: Path) -> None:
    path = write(tmp_path, ENTRY + "metrics:\n  - {name: acuracy, primary: true}\n")
    with pytest.raises(BenchregError) as info:
        load_task("mine/t1", [tmp_path])
    assert info.value.where == f"{path}:8"
    assert "did you mean 'accuracy'" in info.value.what


def test_malformed_yaml_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, ENTRY + "metrics: [\n")
    with pytest.raises(BenchregError, match="malformed YAML") as info:
        load_task("mine/t1", [tmp_path])
    assert str(info.value.where).startswith(str(path))


def test_unknown_task_lists_known() -> None:
    with pytest.raises(BenchregError, match=r"unknown task 'molp2s/nope'.*molp2s/gap"):
        load_task("molp2s/nope")


def test_alias_resolves_to_its_entry(tmp_path: Path) -> None:
    write(tmp_path, ENTRY + "aliases: [mine/t1-old]\n")
    assert load_task("mine/t1-old", [tmp_path]).name == "mine/t1"
    assert "mine/t1-old" not in list_tasks([tmp_path])
