"""Name -> component registries, and the one table that maps task-spec fields onto them.

Task YAML files may only *name* components; the names are looked up here, once, when a task is
bound (:func:`benchreg.core.task.bind`). Components register themselves at import time with the
decorators below, so a task file can never import or run code. Nothing is imported from here:
the modules that register components are found through two entry-point groups,
``benchreg.components`` (the built-in metrics and systems) and ``benchreg.families`` (one per
family; another package can add its own the same way). Both are declared in pyproject.toml.

Loading is lazy per family: a family's package registers the family itself, and its component
modules are imported when the family is first looked up (a run of one family imports none of
the others'). A name not found among what is loaded loads everything before it is called
unknown, and listing a registry loads everything, so what a look-up finds never depends on
what was loaded before.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from benchreg.core.errors import UnknownComponentError
from benchreg.core.family import Family
from benchreg.core.reporting import ReportPart
from benchreg.core.types import (
    AnalysisFn,
    AnswerSchema,
    BaselineFactory,
    CountsFn,
    Loader,
    MetricFactory,
    Parser,
    PredictionReader,
    PromptRenderer,
    ResolverFactory,
    SystemFactory,
    ValidatorFn,
)

T = TypeVar("T")


class Registry(Generic[T]):
    """A named collection of components of one kind (loaders, metrics, ...)."""

    def __init__(self, kind: str, *, on_get: Callable[[str], None] | None = None) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._on_get = on_get  # run before every look-up of a name (the families' loader)

    def register(self, name: str) -> Callable[[T], T]:
        def decorate(component: T) -> T:
            self.add(name, component)
            return component

        return decorate

    def add(self, name: str, component: T) -> None:
        if name in self._items and self._items[name] is not component:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = component

    def get(self, name: str, *, where: str | None = None) -> T:
        if self._on_get is not None:
            self._on_get(name)
        if name not in self._items:
            load_core()
        if name not in self._items:
            load_components()
        try:
            return self._items[name]
        except KeyError:
            raise UnknownComponentError(
                f"unknown {self.kind} {name!r}{self._suggestion(name)}",
                where=where,
                fix=f"known {self.kind}s: {', '.join(sorted(self._items)) or '(none)'}",
            ) from None

    def _suggestion(self, name: str) -> str:
        close = difflib.get_close_matches(name, list(self._items), n=1, cutoff=0.5)
        return f"; did you mean {close[0]!r}?" if close else ""

    def names(self) -> list[str]:
        load_components()
        return sorted(self._items)

    def registered(self) -> dict[str, T]:
        """What is registered so far, loading nothing."""
        return dict(self._items)

    def __contains__(self, name: object) -> bool:
        if name not in self._items:
            load_components()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


COMPONENT_GROUP = "benchreg.components"  # modules registering built-in metrics, systems, ...
FAMILY_GROUP = "benchreg.families"  # one package per family (register_family)
_loaded: set[str] = set()  # "core", "families", "all", and "family:<name>" for each family
_family_modules: dict[str, tuple[str, ...]] = {}  # family -> its component modules


def _load_group(group: str) -> None:
    from importlib.metadata import entry_points

    for entry in sorted(entry_points(group=group), key=lambda e: e.name):
        entry.load()


def load_core() -> None:
    """Import the built-in components' modules once (metrics, systems, ...)."""
    if "core" not in _loaded:
        _loaded.add("core")
        _load_group(COMPONENT_GROUP)


def load_families() -> None:
    """Import every family's package once: each registers its family, not yet its components."""
    if "families" not in _loaded:
        _loaded.add("families")
        load_core()
        _load_group(FAMILY_GROUP)


def defer_family_modules(family: str, modules: tuple[str, ...]) -> None:
    """A family's component modules, imported when the family is first looked up."""
    _family_modules[family] = modules


def load_family(name: str) -> None:
    """Import the component modules of family ``name`` once (every family's package first)."""
    load_families()
    if f"family:{name}" in _loaded:
        return
    _loaded.add(f"family:{name}")
    from importlib import import_module

    for module in _family_modules.get(name, ()):
        import_module(module)


def load_components() -> None:
    """Import every module of both entry-point groups once, with every family's components."""
    if "all" in _loaded:
        return
    _loaded.add("all")
    load_families()
    for name in list(_family_modules):
        load_family(name)


loaders: Registry[Loader] = Registry("loader")
answer_schemas: Registry[AnswerSchema] = Registry("answer schema")
parsers: Registry[Parser] = Registry("parser")
metrics: Registry[MetricFactory] = Registry("metric")
counts: Registry[CountsFn] = Registry("counts function")
prediction_readers: Registry[PredictionReader] = Registry("prediction reader")
resolvers: Registry[ResolverFactory] = Registry("resolver")
prompt_renderers: Registry[PromptRenderer] = Registry("prompt renderer")
baselines: Registry[BaselineFactory] = Registry("baseline")
analyses: Registry[AnalysisFn] = Registry("analysis")
validators: Registry[ValidatorFn] = Registry("validator")
systems: Registry[SystemFactory] = Registry("system")
families: Registry[Family] = Registry("family", on_get=load_family)
report_parts: Registry[ReportPart] = Registry("report part")
# `python -m benchreg import <source> ...`: a family's importer of an upstream data set, called
# with the arguments after the source name; returns the exit code
importers: Registry[Callable[[list[str]], int]] = Registry("importer")


@dataclass(frozen=True, slots=True)
class ComponentField:
    """A task-spec field that names components: which registry holds them, how many positional
    arguments come before the params when one is called, whether the task entry alone must
    supply every required param (False where `model.params` may add some at run time), and the
    family module (``benchreg/families/<family>/<module>.py``) that registers them."""

    field: str
    registry: Registry[Any]
    n_args: int
    complete: bool
    module: str


FIELDS: tuple[ComponentField, ...] = (
    ComponentField("loader", loaders, 0, False, "loader"),
    ComponentField("answer_schema", answer_schemas, 0, False, "answer"),
    ComponentField("parser", parsers, 2, True, "parser"),
    ComponentField("predictions", prediction_readers, 3, False, "predictions"),
    ComponentField("resolver", resolvers, 1, True, "resolver"),
    ComponentField("metrics", metrics, 0, True, "metrics"),
    ComponentField("counts", counts, 2, True, "metrics"),
    ComponentField("prompt", prompt_renderers, 3, True, "prompts"),
    ComponentField("baseline", baselines, 1, False, "baseline"),
    ComponentField("analyses", analyses, 1, True, "analysis"),
    ComponentField("validators", validators, 2, True, "validators"),
)


# --- families ------------------------------------------------------------------------------

REPORT_MODULE = "report"  # registers the family's report part (benchreg.core.reporting)
IMPORTERS_MODULE = "importers"  # registers `benchreg import <source>` importers (a package too)
FLOORS_MODULE = "floors"  # registers the family's position-only floors (benchreg.core.floors)


def component_modules() -> tuple[str, ...]:
    """The module names a family may have that register components, in import order: one per
    spec field of :data:`FIELDS`, then the floors, the report part and importers."""
    modules = dict.fromkeys(f.module for f in FIELDS)
    return (*modules, FLOORS_MODULE, REPORT_MODULE, IMPORTERS_MODULE)


def _has_module(folder: Path, name: str) -> bool:
    return (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file()


def register_family(
    package: str,
    package_file: str,
    *,
    release_prompts: str | None,
    packages: tuple[str, ...] = (),
) -> Family:
    """Register the family of ``package`` (call it from the family's ``__init__`` with
    ``__name__, __file__``): the family is named after the package, its `sample/` and `prompts/`
    sit beside it (and `conf/`, config groups of its own options, when it has one), and its
    component modules (those of :func:`component_modules` it has) are imported, so that they
    register their components, when the family is first looked up
    (:func:`load_family`)."""
    here = Path(package_file).resolve().parent
    family = Family(
        name=family_name(package),
        sample_root=here / "sample",
        prompts_dir=here / "prompts",
        release_prompts=release_prompts,
        packages=packages,
        conf_dir=here / FAMILY_CONF if (here / FAMILY_CONF).is_dir() else None,
    )
    families.add(family.name, family)
    modules = tuple(f"{package}.{m}" for m in component_modules() if _has_module(here, m))
    defer_family_modules(family.name, modules)
    return family


FAMILY_CONF = "conf"  # a family's own config groups, in its package folder


def family_name(package: str) -> str:
    """A family is named after its package (``benchreg.families.molp2s`` -> ``molp2s``)."""
    return package.rsplit(".", 1)[-1]


def family_folders() -> dict[str, Path]:
    """Each family's package folder, by family name, from the entry points that register the
    families (:data:`FAMILY_GROUP`), importing no family."""
    from importlib.metadata import entry_points
    from importlib.util import find_spec

    folders: dict[str, Path] = {}
    for entry in entry_points(group=FAMILY_GROUP):
        spec = find_spec(entry.module)
        if spec is not None and spec.submodule_search_locations:
            folders[family_name(entry.module)] = Path(spec.submodule_search_locations[0])
    return dict(sorted(folders.items()))


def all_families() -> list[Family]:
    """Every registered family (their packages imported, not their components)."""
    load_families()
    registered = families.registered()
    return [registered[name] for name in sorted(registered)]
