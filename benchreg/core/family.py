"""What a family tells the core about itself: its embedded sample, prompts and key packages."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    sample_root: Path  # embedded sample data, the default `roots.<family>`
    prompts_dir: Path | None = None  # default prompt templates shipped with the package
    release_prompts: str | None = None  # folder under the data root that overrides prompts_dir
    packages: tuple[str, ...] = ()  # distributions whose versions go into provenance.json
    conf_dir: Path | None = None  # the family's own app config groups (e.g. a baseline option)

    def template_path(self, data_root: Path, file_name: str) -> Path:
        """A release's own prompt file wins over the one shipped with the package."""
        if self.release_prompts:
            candidate = data_root / self.release_prompts / file_name
            if candidate.is_file():
                return candidate
        if self.prompts_dir is None:
            raise FileNotFoundError(file_name)
        return self.prompts_dir / file_name


REPORT_MODULE = "report"  # registers the family's report part (benchreg.core.reporting)
IMPORTERS_MODULE = "importers"  # registers `benchreg import <source>` importers (a package too)


def component_modules() -> tuple[str, ...]:
    """The module names a family may have that register components, in import order: one per
    spec field of :data:`benchreg.core.registry.FIELDS`, then the report part and importers."""
    from benchreg.core.registry import FIELDS

    return (*dict.fromkeys(f.module for f in FIELDS), REPORT_MODULE, IMPORTERS_MODULE)


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
    (:func:`benchreg.core.registry.load_family`)."""
    from benchreg.core import registry

    here = Path(package_file).resolve().parent
    family = Family(
        name=package.rsplit(".", 1)[-1],
        sample_root=here / "sample",
        prompts_dir=here / "prompts",
        release_prompts=release_prompts,
        packages=packages,
        conf_dir=here / "conf" if (here / "conf").is_dir() else None,
    )
    registry.families.add(family.name, family)
    modules = tuple(f"{package}.{m}" for m in component_modules() if _has_module(here, m))
    registry.defer_family_modules(family.name, modules)
    return family


def all_families() -> list[Family]:
    """Every registered family (their packages imported, not their components)."""
    from benchreg.core import registry

    registry.load_families()
    registered = registry.families.registered()
    return [registered[name] for name in sorted(registered)]
