"""benchreg's sweeper: `task=glob(...)` over registered entries, the jobs as Hydra's basic sweeper
makes them, a job whose overrides cannot be composed failing alone, the sweep folder claimed (a
sweep resumed, another one refused) and `multirun.yaml` redacted."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import OmegaConf, open_dict, read_write

from benchreg.app.main import JOB_ERROR_KEY, decode_job_error
from benchreg.app.sweepfolder import MULTIRUN_FILE, write_multirun_yaml
from benchreg.core.entries import list_tasks, task_folders
from benchreg.core.errors import BenchregError
from benchreg.core.provenance import REDACTED
from hydra_plugins.benchreg_sweeper import BenchregSweeper, covering_jobs, expand_task_overrides
from hydra_plugins.benchreg_sweeper.jobs import job_batches
from tests.app.conftest import compose_app
from tests.errors.harness import run_in_process


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


def batches(*overrides: str, size: int | None = None) -> list[list[list[str]]]:
    return job_batches(OverridesParser.create().parse_overrides(list(overrides)), size)


def test_jobs_are_the_product_of_the_values_in_override_order() -> None:
    assert batches("task=a,b", "view=x,y", "run.limit=3") == [
        [
            ["task=a", "view=x", "run.limit=3"],
            ["task=a", "view=y", "run.limit=3"],
            ["task=b", "view=x", "run.limit=3"],
            ["task=b", "view=y", "run.limit=3"],
        ]
    ]


def test_jobs_honour_max_batch_size_and_hydra_sweep_forms() -> None:
    jobs = batches("+a=range(0,5)", size=2)
    assert jobs == [[["+a=0"], ["+a=1"]], [["+a=2"], ["+a=3"]], [["+a=4"]]]
    assert batches("b=choice(x,y)", "b=z") == [[["b=z"]]]  # a key given twice: the last values
    assert batches() == [[[]]]  # no override: one job
    with pytest.raises(HydraException, match="sweep type"):
        batches("lr=interval(0,1)")


class CountingLoader:
    """The sweep's config loader, counting the compositions the sweeper asks for."""

    def __init__(self, loader) -> None:
        self.loader = loader
        self.composed: list[list[str]] = []

    def load_sweep_config(self, master_config, sweep_overrides):
        self.composed.append(list(sweep_overrides))
        return self.loader.load_sweep_config(master_config, sweep_overrides)

    def list_groups(self, parent_name):
        return self.loader.list_groups(parent_name)


@pytest.fixture
def sweeper():
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import HydraContext, RunMode

    from benchreg.core.resources import conf_dir

    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        master = loader.load_configuration("config", [], RunMode.MULTIRUN)
        sweeper = BenchregSweeper()
        sweeper.config = master
        sweeper.hydra_context = HydraContext(config_loader=CountingLoader(loader), callbacks=None)
        yield sweeper


def test_a_good_batch_is_checked_with_one_composition_per_shape(sweeper) -> None:
    batch = [
        [f"task={t}", f"view={v}"]
        for t in ("molp2s/gap", "molp2s/dipole")
        for v in ("correct", "shuffled")
    ]
    assert sweeper.mark_bad_jobs(batch) == batch
    assert covering_jobs(batch) == batch[:3]  # the jobs checked, one shape: Hydra composes one
    assert sweeper.hydra_context.config_loader.composed == batch[:1]


def test_a_job_that_cannot_be_composed_fails_alone_in_its_place(sweeper) -> None:
    batch = [
        ["task=molp2s/gap", "model=baseline"],
        ["task=molp2s/gap", "model=bogus"],
        ["task=molp2s/gap", "run.nosuchkey=1"],
    ]
    good, bad_group, bad_key = sweeper.mark_bad_jobs(batch)
    assert good == batch[0]
    assert bad_group[0] == "task=molp2s/gap" and len(bad_group) == 2  # model=bogus dropped
    key, _, value = bad_group[1].partition("=")
    assert key == f"+{JOB_ERROR_KEY}"
    assert "model=bogus" in decode_job_error(value) and "\n" not in decode_job_error(value)
    assert bad_key[0] == "task=molp2s/gap" and "run.nosuchkey" in decode_job_error(
        bad_key[1].partition("=")[2]
    )


def summary_states(sweep: Path) -> list[tuple[str, str]]:
    import csv

    with (sweep / "summary.csv").open() as handle:
        return [(row["status"], row["error"]) for row in csv.DictReader(handle)]


def test_a_sweep_runs_its_good_jobs_and_exits_2_for_the_one_hydra_cannot_compose(
    tmp_path: Path,
) -> None:
    sweep = tmp_path / "sweep"
    args = ["-m", "task=molp2s/gap", "model=baseline,bogus,random", "run.bootstrap=0"]
    outcome = run_in_process([*args, f"hydra.sweep.dir={sweep}"], tmp_path, {})
    assert outcome.code == 2, outcome.text
    states = summary_states(sweep)
    assert [state for state, _ in states] == ["ok", "failed", "ok"]
    assert "model=bogus" in states[1][1]
    assert "Traceback" not in outcome.text
    saved = OmegaConf.load(sweep / MULTIRUN_FILE)
    assert saved.hydra.sweep.dir == str(sweep)  # written out, not `${now:...}`
    assert "model=baseline,bogus,random" in saved.hydra.overrides.task


def test_the_same_sweep_again_resumes_another_one_is_refused(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    args = ["-m", "task=molp2s/gap", "view=correct,shuffled", "run.bootstrap=0"]
    first = run_in_process([*args, f"hydra.sweep.dir={sweep}"], tmp_path, {})
    assert first.code == 0, first.text
    again = run_in_process([*args, f"hydra.sweep.dir={sweep}"], tmp_path, {})
    assert again.code == 0 and again.out.count("already finished") == 2, again.text
    other = run_in_process(
        ["-m", "task=molp2s/gap", "view=counterfactual", f"hydra.sweep.dir={sweep}"], tmp_path, {}
    )
    assert other.code == 2 and "holds another sweep" in other.text
    assert len(other.error_lines()) == 1 and "Traceback" not in other.text


def test_multirun_yaml_is_redacted_with_the_sweep_folder_written_out(tmp_path: Path) -> None:
    config = compose_app(
        "model=random", "model.label=https://user:pa55word@example.org/v1", hydra_node=True
    )
    with read_write(config), open_dict(config):
        config.hydra.overrides.task = ["model.api_key=sk-abcdefghijklmnopqrstuv", "task=x"]
        config.hydra.job.override_dirname = "model.api_key=sk-abcdefghijklmnopqrstuv,task=x"
    write_multirun_yaml(config, tmp_path)
    text = (tmp_path / MULTIRUN_FILE).read_text()
    assert "pa55word" not in text and "sk-abcdefghijklmnopqrstuv" not in text
    saved = OmegaConf.load(tmp_path / MULTIRUN_FILE)
    assert saved.hydra.overrides.task == [f"model.api_key={REDACTED}", "task=x"]
    assert saved.hydra.job.override_dirname == f"model.api_key={REDACTED},task=x"
    assert saved.hydra.sweep.dir == str(tmp_path) and saved.task == config.task


# --- job configs: one Hydra composition per job shape (hydra_plugins.benchreg_sweeper.compose) --


JOBS = [
    ["task=molp2s/gap", "view=correct"],
    ["task=molp2s/logp", "view=shuffled"],  # same shape: derived
    ["task=cblue/CHIP-CTC", "view=dev", "run.limit=3"],  # a new shape
    ["task=cblue/CMeEE-V2", "view=test", "run.limit=5"],
    ["task=molp2s/gap", "view='counter factual'", "run.limit=null"],
    ["task=molp2s/gap", "model=random", "model.seed=3"],  # a group choice: in the shape
    ["task=molp2s/gap", "model=random", "model.seed=4"],
    ["task=molp2s/gap", "model=predictions", "model.path=x.jsonl"],
    ["task=reaction_mc/all_varying", "model=baseline", "+model.params.k=1"],
    ["task=reaction_mc/all_varying", "model=baseline", "+model.params.k=2"],
    ["task=molp2s/gap", "run=null"],  # a container replaced by a value: Hydra's own way
    ["task=molp2s/gap", "run.limit=3", "run.limit=4"],  # a key set twice
    ["task=molp2s/gap", "hydra.job.chdir=false"],
]


def sweep_loader() -> tuple[object, object]:
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import RunMode

    from benchreg.core.resources import conf_dir

    initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3")
    loader = GlobalHydra.instance().config_loader()
    master = loader.load_configuration("config", ["hydra.sweep.dir=/tmp/x"], RunMode.MULTIRUN)
    return loader, master


def test_each_job_config_is_what_hydra_composes() -> None:
    from hydra.core.global_hydra import GlobalHydra

    from hydra_plugins.benchreg_sweeper.compose import JobConfigs

    loader, master = sweep_loader()
    try:
        configs = JobConfigs(loader, master)
        for job in JOBS:
            ours = configs(job)
            hydra = loader.load_sweep_config(master, job)
            assert OmegaConf.to_yaml(ours) == OmegaConf.to_yaml(hydra), job
            assert OmegaConf.is_readonly(ours.hydra) == OmegaConf.is_readonly(hydra.hydra)
            assert ours.hydra.job.override_dirname == hydra.hydra.job.override_dirname
        assert configs.composed == len(JOBS) - 4  # jobs 2, 4, 5 and 7: copies of a known shape
    finally:
        GlobalHydra.instance().clear()


def test_a_job_config_is_never_shared_with_the_next_job() -> None:
    from hydra.core.global_hydra import GlobalHydra

    from hydra_plugins.benchreg_sweeper.compose import JobConfigs

    loader, master = sweep_loader()
    try:
        configs = JobConfigs(loader, master)
        first = configs(["task=molp2s/gap", "view=correct"])
        with open_dict(first):
            first.run.limit = 99  # what a launcher or run_job may set on its job
        second = configs(["task=molp2s/logp", "view=correct"])
        assert second.run.limit is None and second.task == "molp2s/logp"
    finally:
        GlobalHydra.instance().clear()
