"""Config composition in-process: `task` is a plain name resolved by the core composer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf

from benchreg.app.config import bound_task, mode, searchpath_folders
from benchreg.core.entries import list_tasks
from benchreg.core.errors import BenchregError


def test_task_is_a_plain_string_with_a_default(app_config) -> None:
    cfg = app_config()
    assert cfg.task == "molp2s/gap"
    assert bound_task(cfg).name == "molp2s/gap"


def test_every_registered_task_resolves_through_the_app(app_config) -> None:
    cfg = app_config()  # composing once is enough: `task` is only a string to Hydra
    names = list_tasks()
    assert len(names) >= 37
    for name in names:
        cfg.task = name
        assert bound_task(cfg).name == name


def test_alias_resolves_to_its_entry(app_config) -> None:
    assert bound_task(app_config("task=cblue/CMeIE-V2")).name == "cblue/CMeIE"


def test_run_and_sweep_dirs_name_the_task_safely(app_config) -> None:
    cfg = app_config("task=cblue/CMeIE-V2", "view=dev", "model=random", hydra_node=True)
    run_dir = OmegaConf.to_container(cfg.hydra.run, resolve=True)["dir"]
    assert run_dir.endswith("_cblue-CMeIE-V2_dev_random")
    cfg.hydra.job.num = 3
    assert cfg.hydra.sweep.subdir == "003_cblue-CMeIE-V2_dev_random"  # sorted by name = by number


def test_folders_always_name_the_view_and_what_they_hold(app_config) -> None:
    """The default view is in the name when `view=` is not given (issue 21, item 7), and a
    `mode=prompts` / `mode=validate` folder is named for what it holds, not for a model."""

    def run_dir(*overrides: str) -> str:
        cfg = app_config(*overrides, hydra_node=True)
        return OmegaConf.to_container(cfg.hydra.run, resolve=True)["dir"]

    assert run_dir("task=molp2s/gap").endswith("_molp2s-gap_correct_baseline")
    assert run_dir("task=cblue/CMeIE-V2", "model=random").endswith("_cblue-CMeIE-V2_dev_random")
    assert run_dir("task=molp2s/gap", "mode=prompts").endswith("_molp2s-gap_correct_prompts")
    assert run_dir("task=molp2s/gap", "view=shuffled", "mode=validate").endswith(
        "_molp2s-gap_shuffled_validation"
    )
    # a task that cannot be read gets a name without a view; its run fails with the reason
    assert run_dir("task=molp2s/nope").endswith("_molp2s-nope_baseline")


def test_job_folders_are_zero_padded_from_the_planned_jobs(app_config, tmp_path) -> None:
    from benchreg.app.main import _job_number
    from benchreg.app.sweepfolder import _num

    assert _job_number(7) == "007" and _job_number(7, tmp_path) == "007"
    (tmp_path / "sweep.json").write_text(json.dumps({"jobs": [["x=1"]] * 1200}))
    assert _job_number(7, tmp_path) == "0007"  # 1200 jobs: 4 digits
    assert _num(tmp_path / "0007_molp2s-gap_correct_baseline") == 7


def test_user_folder_on_hydra_searchpath(app_config, user_folder) -> None:
    root = user_folder()
    searchpath = f"hydra.searchpath=[file://{root}]"
    cfg = app_config("task=mine/my_gap", searchpath, hydra_node=True)
    assert cfg.task == "mine/my_gap"
    spec = bound_task(cfg, cfg.hydra.searchpath)
    assert spec.name == "mine/my_gap" and spec.family == "molp2s"


def test_user_folder_in_env_var(app_config, user_folder, monkeypatch) -> None:
    root = user_folder(hydra_layout=False)
    monkeypatch.setenv("BENCHREG_TASKS_PATH", str(root))
    assert bound_task(app_config("task=mine/my_gap")).data == ["data/gap"]


def test_an_entry_is_bound_once_until_one_of_its_files_changes(app_config, user_folder) -> None:
    root = user_folder()
    cfg = app_config("task=mine/my_gap")
    searchpath = [f"file://{root}"]
    entry = root / "tasks" / "mine" / "my_gap.yaml"
    fresh = bound_task(cfg, searchpath)
    assert bound_task(cfg, searchpath) is not fresh  # just written: its mtime cannot tell yet
    written_long_ago = time.time() - 60
    os.utime(entry, (written_long_ago, written_long_ago))
    first = bound_task(cfg, searchpath)
    assert bound_task(cfg, searchpath) is first  # the jobs of a sweep share it
    entry.write_text(entry.read_text("utf-8").replace("data/gap", "data/gap2"), "utf-8")
    changed = bound_task(cfg, searchpath)
    assert changed is not first and changed.data == ["data/gap2"]
    assert bound_task(app_config("task=molp2s/gap")).name == "molp2s/gap"  # its own entry


def test_searchpath_folders_keep_only_file_entries(tmp_path: Path) -> None:
    folders = searchpath_folders([f"file://{tmp_path}", "pkg://somewhere.conf"])
    assert folders == [tmp_path.resolve()]


def test_interpolation_in_user_entry_is_rejected_with_file_line(app_config, user_folder) -> None:
    root = user_folder(USER_ENTRY_WITH_INTERPOLATION)
    cfg = app_config("task=mine/my_gap")
    with pytest.raises(BenchregError) as info:
        bound_task(cfg, [f"file://{root}"])
    assert info.value.where == f"{root}/tasks/mine/my_gap.yaml:5"
    assert "task files may only name registered components" in info.value.message


@pytest.mark.parametrize(
    ("name", "nearest"), [("molp2s/gapp", "molp2s/gap"), ("cblue/cmeee-v2", "cblue/CMeEE-V2")]
)
def test_unknown_task_names_the_nearest(app_config, name: str, nearest: str) -> None:
    with pytest.raises(BenchregError) as info:
        bound_task(app_config(f"task={name}"))
    message = info.value.message
    assert f"unknown task {name!r}" in message and repr(nearest) in message
    assert "\n" not in message


def test_unknown_mode_is_one_clear_error(app_config) -> None:
    assert mode(app_config("mode=prompts")) == "prompts"
    expected = r"bad value mode='score'.*\(set mode=<run\|validate\|prompts>\)"
    with pytest.raises(BenchregError, match=expected):
        mode(app_config("mode=score"))


def test_help_points_at_the_task_list(app_config) -> None:
    template = app_config(hydra_node=True).hydra.help.template
    assert "python -m benchreg tasks" in template


USER_ENTRY_WITH_INTERPOLATION = """\
defaults:
  - /task/_base/molp2s@_here_
  - _self_
name: mine/my_gap
description: "copy of ${task.name}"
data: [data/gap]
"""


def test_a_search_path_folder_with_task_group_is_told_to_rename_it(tmp_path: Path) -> None:
    from benchreg.app.main import reject_task_group_folders

    (tmp_path / "task" / "mine").mkdir(parents=True)
    reject_task_group_folders(["task=mine/x", f"hydra.searchpath=[file://{tmp_path / 'none'}]"])
    with pytest.raises(BenchregError) as info:
        reject_task_group_folders(["task=mine/x", f"hydra.searchpath=[file://{tmp_path}]"])
    assert info.value.where == str(tmp_path / "task")
    assert "go under `tasks/`, not `task/`" in info.value.message


# --- the pre-check: overrides judged before Hydra composes (benchreg.app.precheck) --------------

# each a mistake the pre-check judges, alone or behind another; the app (without the pre-check)
# must give the very same line
JUDGED = [
    ("run.limit=abc",),
    ("run.limit=0",),
    ("run.limit=1.5",),
    ("run.limit='3'",),
    ("run.seed=1e20",),
    ("run.progress=no",),
    ("run.cache=READ_WRITE",),
    ("run.cache_dir=5",),
    ("run.limt=3",),
    ("run=5",),
    ("mode=score",),
    ("task=molp2s/gapp",),
    ("task=cblue/cmeee-v2",),
    ("task=../../etc/passwd",),
    ("task=''",),
    ("task=null",),
    ("roots.molp2s=5",),
    ("roots.molp=/x",),
    ("model=baslin",),
    ("modl=random",),
    ("chunker=bogus",),
    ("chunker=page", "model=bogus"),
    ("model=bogus", "chunker=bogus"),
    ("model=random", "model.seed=x"),
    ("model=predictions",),
    ("model.name=bogus",),
    ("model.params.top_k=5",),
    ("model=openai", "model.model=m", "model.backoff.multiplier=0.5"),
    ("model=llama_cpp", "model.n_ctx=10"),
    ("model.api_key=sk-abcdefghijklmnopqrstuvwx",),
    ("run.limit=3", "run.limit=abc"),
    ("task=nope", "run.limit=abc"),
    ("run.limit=abc", "mode=foo"),
    ("loader_params.split=x", "task=nope"),
    ("model=random", "model.seed=3", "task=nope"),
]


@pytest.mark.parametrize("args", JUDGED, ids=" ".join)
def test_the_precheck_says_what_the_app_says(args, tmp_path, monkeypatch) -> None:
    import benchreg.__main__ as entry
    from benchreg.app.precheck import check
    from tests.errors.harness import run_in_process

    argv = [*args, f"hydra.run.dir={tmp_path / 'run'}"]
    with pytest.raises(BenchregError) as info:
        check(argv)
    assert "\n" not in info.value.message
    monkeypatch.setattr(entry, "precheck", lambda args: None)  # the app alone, as before
    app = run_in_process(argv, tmp_path, {})
    assert app.code == info.value.exit_code == 2
    assert app.error_lines() == [f"ERROR   {info.value.message}"]


@pytest.mark.parametrize(
    "args",
    [
        ("task=molp2s/gap", "view=counterfactual"),  # fine: the app takes over
        ("task=cblue/CMeIE-V2", "model=random", "run.limit=2", "hydra.run.dir=/tmp/x"),
        ("chunker=page", "run.limit=abc"),  # a family's group: composed by Hydra only
        ("-m", "run.limit=abc"),  # a sweep reports each job's error in its folder
        ("+run.limt=3",),
        ("run.limit=[1]",),
        ("run.limit=1_000",),
        ("run.limit=${oc.env:X}",),
        ("task=a,b",),
        ("view=sideways",),  # judged once the entry is bound
        ("model=llama_cpp_gemma", "model.n_ctx=10"),  # its file has a defaults list
        ("hydra.searchpath=[file:///nowhere]", "task=mine/x"),
        ("hydra/launcher=jobib",),
        ("--cfg", "job", "run.limit=abc"),
    ],
    ids=" ".join,
)
def test_the_precheck_leaves_the_rest_to_hydra_and_the_app(args) -> None:
    from benchreg.app.precheck import check

    assert check(list(args)) is None


def test_a_bad_override_is_answered_without_hydra_or_a_family() -> None:
    """Neither Hydra nor any family's components (loaders, parsers, ...) are imported."""
    code = (
        "import sys\n"
        "from benchreg.app.precheck import check\n"
        "for args in (['run.limit=abc'], ['task=nope'], ['model=baslin']):\n"
        "    try: check(args)\n"
        "    except Exception as exc: print(type(exc).__name__)\n"
        "print([m for m in sys.modules if m.split('.')[0] == 'hydra'"
        " or m.startswith('benchreg.families.') and m.count('.') > 2])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["BenchregError"] * 3 + ["[]"]


def test_the_config_files_read_as_hydra_reads_them() -> None:
    """The pre-check and `--help` read conf/ with PyYAML; OmegaConf (Hydra) reads the same."""
    from benchreg.app.help import config_roots

    paths = [path for root in config_roots() for path in sorted(root.rglob("*.yaml"))]
    assert len(paths) > 5
    for path in paths:
        ours = yaml.safe_load(path.read_text("utf-8"))
        assert ours == OmegaConf.to_container(OmegaConf.load(path), resolve=False), path


@pytest.fixture(scope="module")
def hydra_parser():
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create()


VALUE_TEXT = st.text(alphabet="aZeE_09187.+-/:@%*?|$\\'\" ,[]{}()=é\t", max_size=8)
KEY_TEXT = st.text(alphabet="abZ_-.09/@+~$", min_size=1, max_size=8)


@settings(max_examples=400, deadline=None)
@given(value=VALUE_TEXT, key=KEY_TEXT)
@example(value="1_000", key="a")
@example(value="01.5", key="a")
@example(value="1.", key="a")
@example(value=".5e-3", key="a")
@example(value="007e1", key="a")
@example(value="-inf", key="a")
@example(value="NaN", key="a")
@example(value="tRuE", key="a")
@example(value="NULL", key="a")
@example(value="True1", key="a")
@example(value="+5", key="a")
@example(value="00", key="a")
@example(value="", key="a")
@example(value="'a,b'", key="a")
@example(value="molp2s/*", key="task")
@example(value="/tmp/x@y:z", key="hydra.run.dir")
@example(value="3", key="run.limit")
def test_the_precheck_reads_an_override_as_hydra_does(hydra_parser, value, key) -> None:
    """Whatever the pre-check reads, it reads as Hydra's override grammar does (same key, same
    value of the same type); anything else it leaves to Hydra."""
    from benchreg.app.precheck import Unjudged, read_override

    arg = f"{key}={value}"
    try:
        ours = read_override(arg)
    except Unjudged:
        return
    theirs = hydra_parser.parse_override(arg)
    assert not theirs.is_sweep_override() and theirs.is_force_add() is False
    assert theirs.key_or_group == ours.key and theirs.package is None
    assert type(theirs.value()) is type(ours.value)
    assert repr(theirs.value()) == repr(ours.value)  # nan == nan too


def test_one_precheck_leaves_nothing_behind_for_the_next() -> None:
    """A value set by one command line never shows in the next one's check (a process that
    checks several, as the tests and a library user do)."""
    from benchreg.app.precheck import check
    from benchreg.core.errors import BenchregError

    with pytest.raises(BenchregError, match=r"model\.seed"):
        check(["model=random", "model.seed='x'"])
    check(["model=random"])  # no error: the earlier value is gone
