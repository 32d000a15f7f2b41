"""Every option of every config group composes in-process (as in lightning-hydra-template's
`test_configs.py`), validates with `app_settings` and lands where its `# @package` line says.

The options are found with glob, never listed by hand: the app's `conf/<group>/*.yaml` (nested
groups such as `hydra/launcher` included) and the family-declared groups
`benchreg/families/<family>/conf/<group>/*.yaml`, which `hydra_plugins/benchreg_searchpath` puts
on Hydra's search path and which the app selects as `+<group>=<option>`
(`benchreg.app.config.with_family_groups`)."""

from __future__ import annotations

import copy
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf, open_dict

import benchreg.app.main  # registers the run-dir resolvers and the `roots` node
import benchreg.families
from benchreg.app.config import app_settings, family_groups, with_family_groups
from benchreg.core.errors import BenchregError
from benchreg.core.resources import conf_dir

CONF = conf_dir()
FAMILIES = Path(benchreg.families.__file__).resolve().parent
PACKAGE_LINE = re.compile(r"#\s*@package\s+(\S+)")
DUMMY = "dummy-value-for-test"  # given to every `???` (required) key of an option


@dataclass(frozen=True)
class Option:
    group: str  # e.g. "model", "hydra/launcher", "chunker"
    name: str  # the file stem
    path: Path
    family: str | None = None  # the family that declares the group (None: the app's conf/)

    @property
    def id(self) -> str:
        where = f"{self.family}:" if self.family else ""
        return f"{where}{self.group}={self.name}"

    @property
    def override(self) -> str:
        return f"{self.group}={self.name}"


def app_options() -> list[Option]:
    """`conf/<group>/**.yaml`: every yaml below the config folder except the primary config."""
    return [
        Option(path.parent.relative_to(CONF).as_posix(), path.stem, path)
        for path in sorted(CONF.glob("**/*.yaml"))
        if path.parent != CONF
    ]


def family_options() -> list[Option]:
    """`benchreg/families/<family>/conf/<group>/*.yaml`."""
    return [
        Option(path.parent.name, path.stem, path, family=path.parents[2].name)
        for path in sorted(FAMILIES.glob("*/conf/*/*.yaml"))
    ]


APP_OPTIONS = app_options()
FAMILY_OPTIONS = family_options()


def package_of(option: Option) -> str:
    """The dotted key the option's content lands at: its `# @package` header, else Hydra 1.3's
    default `_group_` (the group path, dotted); `""` for `_global_`."""
    package = "_group_"
    for line in option.path.read_text("utf-8").splitlines():
        if match := PACKAGE_LINE.match(line.strip()):
            package = match[1]
            break
        if line.strip() and not line.lstrip().startswith("#"):
            break  # the header is only read before the first line of YAML
    package = package.replace("_group_", option.group.replace("/", "."))
    return "" if package == "_global_" else package.removeprefix("_global_.")


def own_content(option: Option) -> dict[str, Any]:
    """The option file's keys and values (unresolved), without its defaults list."""
    content = OmegaConf.to_container(OmegaConf.load(option.path), resolve=False)
    assert isinstance(content, dict), f"{option.path} is not a YAML mapping"
    content.pop("defaults", None)
    return content


def required_overrides(option: Option) -> list[str]:
    """A dummy value for every top-level `???` key of the option (e.g. `model.path`)."""
    node = OmegaConf.load(option.path)
    package = package_of(option)
    return [
        f"{package}.{key}={DUMMY}" if package else f"{key}={DUMMY}"
        for key in node
        if key != "defaults" and OmegaConf.is_missing(node, key)
    ]


def compose_with(overrides: list[str]) -> DictConfig:
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("config", overrides=overrides, return_hydra_config=True)


def app_part(cfg: DictConfig) -> DictConfig:
    """The config without `hydra`, as Hydra hands it to the task function (`hydra.*` holds
    interpolations such as `${hydra.job.num}` that resolve only inside a running job)."""
    plain = copy.deepcopy(cfg)
    with open_dict(plain):
        del plain["hydra"]
    return plain


def node_at(cfg: DictConfig, package: str) -> Any:
    node = OmegaConf.select(cfg, package) if package else cfg
    assert node is not None, f"nothing composed at {package!r}"
    return OmegaConf.to_container(node, resolve=False)


def require_launcher_plugin(option: Option) -> None:
    """Skip (with the reason) a launcher option whose base config comes from a Hydra launcher
    plugin that is not installed. Hydra's launcher plugins follow one naming rule: config
    `<name>[_<variant>]` from module `hydra_plugins.hydra_<name>_launcher`, pip package
    `hydra-<name>-launcher`; `basic` is Hydra's own."""
    if option.group != "hydra/launcher":
        return
    defaults = OmegaConf.load(option.path).get("defaults") or []
    for entry in defaults:
        base = entry if isinstance(entry, str) else None
        if base is None or base == "_self_" or base == "basic":
            continue
        if (option.path.parent / f"{base}.yaml").is_file():
            continue  # a sibling option of the app's own conf/
        name = base.split("_")[0]
        module = f"hydra_plugins.hydra_{name}_launcher"
        if importlib.util.find_spec(module) is None:
            pytest.skip(
                f"{option.id}: its base launcher config {base!r} is registered by {module}, "
                f"which is not installed (pip install hydra-{name}-launcher)"
            )


# --- the options are found --------------------------------------------------------------------


def test_the_glob_finds_the_documented_groups() -> None:
    groups = {o.group for o in APP_OPTIONS}
    assert {"model", "hydra/launcher"} <= groups
    assert {"baseline", "random", "predictions"} <= {o.name for o in APP_OPTIONS
                                                       if o.group == "model"}
    assert FAMILY_OPTIONS, "no family declares a config group"


def test_family_groups_are_the_globbed_family_folders() -> None:
    globbed = {o.group: o.path.parent for o in FAMILY_OPTIONS}
    assert {name: path.resolve() for name, path in family_groups().items()} == {
        name: path.resolve() for name, path in globbed.items()
    }


def test_no_family_group_shadows_an_app_group() -> None:
    assert not {o.group for o in FAMILY_OPTIONS} & {o.group for o in APP_OPTIONS}


# --- the app's own groups ---------------------------------------------------------------------


@pytest.mark.parametrize("option", APP_OPTIONS, ids=lambda o: o.id)
def test_app_option_lands_at_its_package(option: Option) -> None:
    require_launcher_plugin(option)
    cfg = compose_with([option.override])
    package = package_of(option)
    composed = node_at(cfg, package)
    for key, value in own_content(option).items():
        assert key in composed, f"{option.id}: {key} not composed at {package}"
        assert composed[key] == value, f"{option.id}: {package}.{key}"


@pytest.mark.parametrize("option", APP_OPTIONS, ids=lambda o: o.id)
def test_app_option_validates(option: Option) -> None:
    require_launcher_plugin(option)
    cfg = compose_with([option.override, *required_overrides(option)])
    settings = app_settings(app_part(cfg))
    assert settings.task == "molp2s/gap" and settings.mode == "run"
    if option.group == "model":
        assert settings.model["name"] == own_content(option)["name"]


@pytest.mark.parametrize(
    "option", [o for o in APP_OPTIONS if o.group == "hydra/launcher"], ids=lambda o: o.id
)
def test_launcher_option_targets_an_importable_launcher(option: Option) -> None:
    require_launcher_plugin(option)
    launcher = compose_with([option.override]).hydra.launcher
    cls = get_class(launcher._target_)
    assert cls.__name__.endswith("Launcher")


def test_model_predictions_keeps_its_path_placeholder_and_refuses_to_run_without_it() -> None:
    cfg = compose_with(["model=predictions"])
    assert OmegaConf.is_missing(cfg.model, "path")  # the documented `path: ???`
    with pytest.raises(BenchregError, match=r"model=predictions needs a file"):
        app_settings(app_part(cfg))
    settings = app_settings(app_part(compose_with(["model=predictions", "model.path=p.jsonl"])))
    assert settings.model == {"name": "predictions", "path": "p.jsonl", "label": None}


def test_model_openai_keeps_its_model_placeholder() -> None:
    cfg = compose_with(["model=openai"])
    assert OmegaConf.is_missing(cfg.model, "model")  # the documented `model: ???`
    assert cfg.model.base_url == "http://127.0.0.1:8000/v1"


def test_an_unknown_model_key_is_refused_with_the_nearest() -> None:
    cfg = compose_with(["model=random", "+model.sed=3"])
    with pytest.raises(BenchregError, match=r"unknown option model\.sed.*did you mean model\.seed"):
        app_settings(app_part(cfg))


def test_app_settings_ignores_the_hydra_node() -> None:
    app_settings(compose_with(["model=random"]))


# --- the families' own groups -----------------------------------------------------------------


@pytest.mark.parametrize("option", FAMILY_OPTIONS, ids=lambda o: o.id)
def test_family_option_lands_at_its_package(option: Option) -> None:
    overrides = with_family_groups([option.override])
    assert overrides == [f"+{option.override}"]
    cfg = compose_with(overrides)
    package = package_of(option)
    composed = node_at(cfg, package)
    for key, value in own_content(option).items():
        assert composed.get(key) == value, f"{option.id}: {package}.{key}"


@pytest.mark.parametrize("option", FAMILY_OPTIONS, ids=lambda o: o.id)
def test_family_option_validates(option: Option) -> None:
    cfg = compose_with(with_family_groups([option.override, *required_overrides(option)]))
    settings = app_settings(app_part(cfg))
    package = package_of(option)
    plain = settings.model_dump()
    for key, value in own_content(option).items():
        assert OmegaConf.select(OmegaConf.create(plain), f"{package}.{key}") == value


def test_a_family_group_without_plus_is_refused_by_hydra() -> None:
    """Why the app rewrites the override: Hydra alone refuses `chunker=page`."""
    option = FAMILY_OPTIONS[0]
    with pytest.raises(ConfigCompositionException, match=rf"use \+{re.escape(option.override)}"):
        compose_with([option.override])


def test_a_launcher_option_of_a_missing_plugin_is_skipped_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "hydra" / "launcher" / "cloud.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("# @package hydra.launcher\ndefaults:\n  - nosuchplugin_aws\n", "utf-8")
    option = Option("hydra/launcher", "cloud", path)
    assert package_of(option) == "hydra.launcher"
    with pytest.raises(pytest.skip.Exception, match=r"pip install hydra-nosuchplugin-launcher"):
        require_launcher_plugin(option)


def test_with_family_groups_adds_plus_to_family_groups_only() -> None:
    assert with_family_groups(["chunker=page", "task=x"]) == ["+chunker=page", "task=x"]


def test_with_family_groups_leaves_other_arguments_alone() -> None:
    args = ["+chunker=page", "chunker", "model=random", "-m", "hydra/launcher=joblib"]
    assert with_family_groups(args) == args
