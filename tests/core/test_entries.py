"""Loading task entries from YAML without Hydra: composition and located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg.core.entries import list_tasks
from benchreg.core.errors import BenchregError
from benchreg.core.task import load_task

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


def test_unknown_task_names_the_nearest_ignoring_case() -> None:
    with pytest.raises(BenchregError, match=r"unknown task 'molp2s/gapp'.*'molp2s/gap'"):
        load_task("molp2s/gapp")
    with pytest.raises(BenchregError, match=r"unknown task 'cblue/cmeee-v2'.*'cblue/CMeEE-V2'"):
        load_task("cblue/cmeee-v2")


def test_unknown_task_without_a_near_name_says_where_the_list_is() -> None:
    with pytest.raises(BenchregError, match=r"unknown task 'zzz'.*python -m benchreg tasks"):
        load_task("zzz")


@pytest.mark.parametrize(
    "value", ["copy of ${name}", "${oc.env:HOME}", "${now:%Y}", "a ${oc.select:x,y} b"]
)
def test_interpolation_is_rejected_with_file_line(tmp_path: Path, value: str) -> None:
    path = write(tmp_path, ENTRY + f"metrics:\n  - name: accuracy\n    label: '{value}'\n")
    with pytest.raises(BenchregError) as info:
        load_task("mine/t1", [tmp_path])
    assert info.value.where == f"{path}:9"
    assert "interpolation" in info.value.what
    assert "may only name registered components" in info.value.message


def test_interpolation_in_a_base_names_the_base(tmp_path: Path) -> None:
    base = write(tmp_path, "description: ${oc.env:USER}\n", name="_bases/mine")
    write(tmp_path, ENTRY.replace("/task/_base/molp2s@_here_", "/task/_bases/mine@_here_"))
    with pytest.raises(BenchregError) as info:
        load_task("mine/t1", [tmp_path])
    assert info.value.where == f"{base}:1"


def test_error_in_a_base_points_into_the_base(tmp_path: Path) -> None:
    base = write(tmp_path, "family: molp2s\nloader: molp2s\nanswer_schema: nope\n", "_b/x")
    write(
        tmp_path,
        ENTRY.replace("_base/molp2s", "_b/x") + "metrics: [{name: accuracy, primary: true}]\n",
    )
    with pytest.raises(BenchregError) as info:
        load_task("mine/t1", [tmp_path])
    assert info.value.where == f"{base}:3"


def test_base_listed_after_self_wins_and_errors_point_at_it(tmp_path: Path) -> None:
    base = write(tmp_path, "loader:\n  name: molp2s\n  parms: {}\n", "_b/loader")
    text = ENTRY.replace("  - _self_\n", "  - _self_\n  - /task/_b/loader@_here_\n")
    write(tmp_path, text + "loader: molp2s\n")
    with pytest.raises(BenchregError) as info:
        load_task("mine/t1", [tmp_path])
    assert info.value.where == f"{base}:3"


def test_bad_defaults_entry_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, ENTRY.replace("_base/molp2s", "_base/nothing"))
    with pytest.raises(BenchregError, match="names no file") as info:
        load_task("mine/t1", [tmp_path])
    assert info.value.where == f"{path}:2"


def test_hydra_layout_lists_only_the_task_subtree(tmp_path: Path) -> None:
    write(tmp_path / "tasks", ENTRY)
    write(tmp_path, "name: random\n", name="model/mine")  # another config group of the user
    assert list_tasks([tmp_path]) == ["mine/t1"]
    assert load_task("mine/t1", [tmp_path]).name == "mine/t1"


def test_alias_resolves_to_its_entry(tmp_path: Path) -> None:
    write(tmp_path, ENTRY + "aliases: [mine/t1-old]\n")
    assert load_task("mine/t1-old", [tmp_path]).name == "mine/t1"
    assert "mine/t1-old" not in list_tasks([tmp_path])
