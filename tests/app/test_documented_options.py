"""Options the docs name work as documented: `model.label=`, `model.extra_body=`, the loader's
params from the command line, and an entry's `name:` matches its path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchreg.app.config import with_family_groups
from benchreg.core.errors import BenchregError
from benchreg.core.task import load_task


def test_loader_params_are_rewritten_for_hydra() -> None:
    assert with_family_groups(["task.loader.params.split=test", "loader_params.x=1"]) == [
        "+loader_params.split=test",
        "+loader_params.x=1",
    ]
    assert with_family_groups(["+loader_params.x=1", "task=a"]) == ["+loader_params.x=1", "task=a"]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["baseline", "random"])
def test_model_label_is_shown_and_the_identity_kept(cli: Any, tmp_path: Path, model: str) -> None:
    out = tmp_path / "run"
    proc = cli("task=molp2s/gap", f"model={model}", "model.label=mine", f"hydra.run.dir={out}")
    assert proc.returncode == 0, proc.stderr[-1500:]
    record = json.loads((out / "metrics.json").read_text())
    assert record["model"] == "mine" and record["model_id"] != "mine"


@pytest.mark.slow
def test_a_loader_param_from_the_command_line_reaches_the_loader(cli: Any, tmp_path: Path) -> None:
    bad = cli("task=cblue/CMeEE-V2", "task.loader.params.split=nope", f"hydra.run.dir={tmp_path}/a")
    assert bad.returncode == 2 and "split file nope.json not found" in bad.stderr
    unknown = cli("task=cblue/CMeEE-V2", "loader_params.bogus=1", f"hydra.run.dir={tmp_path}/b")
    assert unknown.returncode == 2
    assert "override loader_params: loader 'cblue': unknown param 'bogus'" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    good = cli("task=cblue/CMeEE-V2", "task.loader.params.split=dev", f"hydra.run.dir={tmp_path}/c")
    assert good.returncode == 0, good.stderr[-1500:]


def test_an_entry_whose_name_differs_from_its_path_is_an_error(tmp_path: Path) -> None:
    entry = tmp_path / "mine" / "x.yaml"
    entry.parent.mkdir()
    entry.write_text(
        "defaults:\n  - /task/_base/molp2s@_here_\n  - _self_\n"
        "name: molp2s/gap\ndescription: d\ndata: [data/gap]\n"
        "metrics:\n  - {name: accuracy, primary: true}\n"
    )
    with pytest.raises(BenchregError) as info:
        load_task("mine/x", [tmp_path])
    assert info.value.where == f"{entry}:4"
    assert "'mine/x' says `name: molp2s/gap`" in info.value.message
    entry.write_text(entry.read_text().replace("name: molp2s/gap", "name: mine/x"))
    assert load_task("mine/x", [tmp_path]).name == "mine/x"


def test_a_mapping_value_fills_an_empty_mapping_option() -> None:
    from hydra import compose, initialize_config_dir

    from benchreg.app.config import app_settings
    from benchreg.core.resources import conf_dir

    argv = ["model=openai", "model.model=m", "model.extra_body={top_k: 20}"]
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        cfg = compose("config", overrides=with_family_groups(argv))
    assert app_settings(cfg).model["extra_body"] == {"top_k": 20}
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        typo_argv = [*argv[:2], "model.extr_body={a: 1}"]
        typo = compose("config", overrides=with_family_groups(typo_argv))
    with pytest.raises(BenchregError, match=r"unknown option model\.extr_body"):
        app_settings(typo)
