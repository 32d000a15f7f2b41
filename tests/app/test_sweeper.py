"""The sweeper's `task=glob(...)` expansion over registered entries, checked before any job."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg.core.entries import list_tasks, task_folders
from benchreg.core.errors import BenchregError
from hydra_plugins.benchreg_sweeper import covering_jobs, expand_task_overrides


def task_values(overrides: list[str]) -> list[str]:
    (task,) = [o for o in overrides if o.startswith("task=")]
    return task.removeprefix("task=").split(",")


def test_glob_expands_to_every_nested_entry_of_a_family() -> None:
    out = expand_task_overrides(["task=glob(molp2s/*)", "view=correct,shuffled"], task_folders())
    names = task_values(out)
    assert names == [n for n in list_tasks() if n.startswith("molp2s/")]
    assert len(names) == 15
    assert "view=correct,shuffled" in out


def test_glob_never_matches_bases_or_aliases() -> None:
    names = task_values(expand_task_overrides(["task=glob(*)"], task_folders()))
    assert not any(part.startswith("_") for name in names for part in name.split("/"))
    assert "cblue/CMeIE" in names and "cblue/CMeIE-V2" not in names


def test_glob_exclude_is_honoured() -> None:
    out = expand_task_overrides(["task=glob(molp2s/*,exclude=molp2s/*nmr*)"], task_folders())
    names = task_values(out)
    assert names and not any("nmr" in name for name in names)


def test_glob_over_a_user_folder(user_folder) -> None:
    root = user_folder()
    user_folder(name="mine/_shared")  # a base of the user's own: never swept
    out = expand_task_overrides(["task=glob(mine/*)"], task_folders([root]))
    assert task_values(out) == ["mine/my_gap"]


def test_empty_glob_is_one_line_with_the_nearest() -> None:
    with pytest.raises(BenchregError) as info:
        expand_task_overrides(["task=glob(molp2/*)"], task_folders())
    assert "matches no task" in info.value.message and "molp2s/*" in info.value.message
    assert "\n" not in info.value.message


def test_unknown_name_in_a_sweep_is_left_to_its_own_job() -> None:
    out = expand_task_overrides(["task=molp2s/gap,molp2s/gapp"], task_folders())
    assert out == ["task=molp2s/gap,molp2s/gapp"]  # that job fails; the others run


def test_other_overrides_and_aliases_pass_through(tmp_path: Path) -> None:
    args = ["task=cblue/CMeIE-V2", "model=random,baseline", "run.limit=3"]
    assert expand_task_overrides(args, task_folders()) == args


def test_each_distinct_override_is_validated_once() -> None:
    batch = [["task=a", "view=x"], ["task=a", "view=y"], ["task=b", "view=x"], ["task=b", "view=y"]]
    assert covering_jobs(batch) == batch[:3]


def _loader_and_master(*overrides: str):
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra._internal.utils import create_config_search_path
    from hydra.types import RunMode

    from benchreg.core.resources import conf_dir

    loader = ConfigLoaderImpl(config_search_path=create_config_search_path(str(conf_dir())))
    master = loader.load_configuration("config", list(overrides), RunMode.MULTIRUN)
    return loader, master


def _plain(cfg) -> dict:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg, resolve=False)


JOBS = [
    ["task=molp2s/gap", "view=correct"],
    ["task=molp2s/gap", "view=shuffled"],  # derived from the first
    ["task=molp2s/dipole", "view=counterfactual"],  # derived
    ["task=molp2s/dipole", "view=null"],  # derived, a null value
    ["task=molp2s/dipole", "view=counterfactual", "run.limit=3"],  # another shape: composed
    ["task=molp2s/gap", "view=correct", "run.limit=5"],  # derived from the one above
    ["task=molp2s/gap", "view=correct", "model=random"],  # a group: another shape
    ["task=molp2s/gap", "view=shuffled", "model=random"],  # derived (same group choice)
    ["task=molp2s/gap", "view=shuffled", "model=predictions"],  # a group changes: composed
]


def test_derived_job_configs_equal_a_fresh_composition() -> None:
    from omegaconf import OmegaConf

    from hydra_plugins.benchreg_sweeper.compose import ComposeCache

    loader, master = _loader_and_master("run.overwrite=true")
    cache = ComposeCache(loader, loader.load_sweep_config)
    for job in JOBS:
        derived = cache(master, list(job))
        fresh = loader.load_sweep_config(master, list(job))
        assert _plain(derived) == _plain(fresh), job
        assert OmegaConf.is_struct(derived) and not OmegaConf.is_readonly(derived.hydra)
        assert derived.hydra.job.override_dirname == fresh.hydra.job.override_dirname
    assert cache.copied == 5 and cache.composed == len(JOBS) - 5


def test_a_derived_config_is_a_copy_never_the_template() -> None:
    from omegaconf import OmegaConf

    from hydra_plugins.benchreg_sweeper.compose import ComposeCache

    loader, master = _loader_and_master()
    cache = ComposeCache(loader, loader.load_sweep_config)
    first = cache(master, ["task=molp2s/gap", "view=correct"])
    first.hydra.job.num = 7  # what the launcher does to the config it runs
    first.task = "changed"
    second = cache(master, ["task=molp2s/gap", "view=correct"])
    assert cache.copied == 1
    assert second.task == "molp2s/gap"
    assert OmegaConf.is_missing(second.hydra.job, "num")


def test_what_a_copy_cannot_take_is_composed_by_hydra() -> None:
    from hydra.errors import ConfigCompositionException

    from hydra_plugins.benchreg_sweeper.compose import ComposeCache

    loader, master = _loader_and_master()
    cache = ComposeCache(loader, loader.load_sweep_config)
    cache(master, ["task=molp2s/gap", "run.limit=1"])
    with pytest.raises(ConfigCompositionException):
        cache(master, ["task=molp2s/gap", "run.nosuchkey=1"])  # another shape
    composed = cache.composed
    listed = cache(master, ["task=molp2s/gap", "run.limit=[1,2]"])  # not a scalar: composed
    assert cache.composed == composed + 1
    assert _plain(listed) == _plain(
        loader.load_sweep_config(master, ["task=molp2s/gap", "run.limit=[1,2]"])
    )


NESTED_JOBS = [
    ["task=molp2s/gap", "model=predictions", "model.path=a.jsonl", "run.limit=3"],
    ["task=molp2s/dipole", "model=predictions", "model.path=a.jsonl", "run.limit=3"],  # derived
    ["task=molp2s/dipole", "model=predictions", "model.path=b.jsonl", "run.limit=3"],  # nested
    ["task=molp2s/gap", "model=predictions", "model.path=a.jsonl", "run.limit=4"],  # derived
]


IN_PLACE_JOBS = [
    *JOBS[:4],
    ["task=molp2s/gap", "view=correct"],  # both values back to the template's own lines
    ["task=molp2s/dipole", "view=correct"],  # the task changed again, the view as composed
    *JOBS[4:],
]


@pytest.mark.parametrize(("jobs", "derived"), [(IN_PLACE_JOBS, 7), (NESTED_JOBS, 2)])
def test_in_place_each_job_equals_a_fresh_composition_after_the_ones_before_it(
    jobs: list[list[str]], derived: int
) -> None:
    """What the in-process launchers get: the template itself, run (made read-only, numbered,
    its output folder set) before the next job is derived from it; every job still equals its
    own fresh composition, a value an earlier job changed set back included."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf, open_dict, read_write

    from hydra_plugins.benchreg_sweeper.compose import ComposeCache

    loader, master = _loader_and_master("run.overwrite=true")
    cache = ComposeCache(loader, loader.load_sweep_config)
    shared = 0
    for idx, job in enumerate(jobs):
        config = cache(master, list(job), in_place=True)
        shared += cache.shared
        fresh = loader.load_sweep_config(master, list(job))
        assert _plain(config) == _plain(fresh), job
        assert not OmegaConf.is_readonly(config.hydra)
        with open_dict(config):  # what the launcher and run_job do to the job it runs
            config.hydra.job.id = config.hydra.job.num = idx
        HydraConfig.instance().set_config(config)
        with read_write(config.hydra.runtime), open_dict(config.hydra.runtime):
            config.hydra.runtime.output_dir = f"/out/{idx}"
    assert shared == cache.copied == derived


def test_a_value_beside_a_group_and_its_keys_is_derived() -> None:
    """`model=predictions model.path=...`: a job that changes only `task` (set once, nothing
    inside or around it) is a copy; one that changes `model.path` is composed by Hydra."""
    from hydra_plugins.benchreg_sweeper.compose import ComposeCache

    loader, master = _loader_and_master()
    cache = ComposeCache(loader, loader.load_sweep_config)
    for job in NESTED_JOBS:
        derived = cache(master, list(job))
        fresh = loader.load_sweep_config(master, list(job))
        assert _plain(derived) == _plain(fresh), job
    assert cache.copied == 2 and cache.composed == 2


def _run_both(tmp_path: Path, job: list[str]) -> tuple[dict, dict]:
    """What a task function sees when one job runs through Hydra's run_job and through the
    lean one: its config (values, struct flag), HydraConfig, and the job's return."""
    from hydra.core import utils as hydra_utils
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.utils import JobStatus
    from hydra.types import HydraContext
    from omegaconf import OmegaConf, open_dict

    from hydra_plugins.benchreg_sweeper import launch

    loader, master = _loader_and_master(f"hydra.sweep.dir={tmp_path / 'sweep'}")
    seen: dict[str, dict] = {}
    for name, run_job in (("hydra", hydra_utils.run_job), ("lean", launch.run_job)):
        config = loader.load_sweep_config(master, list(job))
        with open_dict(config):
            config.hydra.job.id = config.hydra.job.num = 3

        def task(cfg, name=name):
            hydra = HydraConfig.get()
            seen[name] = {
                "cfg": OmegaConf.to_container(cfg, resolve=False),
                "struct": OmegaConf.is_struct(cfg),
                "readonly": OmegaConf.is_readonly(cfg),
                "hydra": OmegaConf.to_container(hydra, resolve=False),
                "output_dir": hydra.runtime.output_dir,
                "num": hydra.job.num,
            }
            return "done"

        from hydra._internal.callbacks import Callbacks

        ret = run_job(
            task_function=task,
            config=config,
            job_dir_key="hydra.sweep.dir",
            job_subdir_key="hydra.sweep.subdir",
            hydra_context=HydraContext(config_loader=loader, callbacks=Callbacks()),
        )
        assert ret.status is JobStatus.COMPLETED and ret.return_value == "done"
        seen[name]["return"] = {
            "cfg": OmegaConf.to_container(ret.cfg, resolve=False),
            "hydra_cfg": OmegaConf.to_container(ret.hydra_cfg, resolve=False),
            "overrides": ret.overrides,
            "working_dir": ret.working_dir,
            "task_name": ret.task_name,
        }
    return seen["hydra"], seen["lean"]


@pytest.mark.parametrize("job", [["task=molp2s/gap", "view=shuffled"], ["model=random"]])
def test_the_lean_run_job_gives_the_task_what_hydra_gives(tmp_path: Path, job: list[str]) -> None:
    hydra, lean = _run_both(tmp_path, job)
    assert lean == hydra
    assert hydra["output_dir"].startswith(str(tmp_path / "sweep"))
