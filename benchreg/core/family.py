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

    def template_path(self, data_root: Path, file_name: str) -> Path:
        """A release's own prompt file wins over the one shipped with the package."""
        if self.release_prompts:
            candidate = data_root / self.release_prompts / file_name
            if candidate.is_file():
                return candidate
        if self.prompts_dir is None:
            raise FileNotFoundError(file_name)
        return self.prompts_dir / file_name


def register_family(
    name: str,
    package_file: str,
    *,
    release_prompts: str | None,
    packages: tuple[str, ...] = (),
) -> Family:
    """Register a family laid out the usual way: `sample/` and `prompts/` beside its package."""
    from benchreg.core import registry

    here = Path(package_file).resolve().parent
    family = Family(
        name=name,
        sample_root=here / "sample",
        prompts_dir=here / "prompts",
        release_prompts=release_prompts,
        packages=packages,
    )
    registry.families.add(name, family)
    return family


def all_families() -> list[Family]:
    from benchreg.core import registry

    return [registry.families.get(name) for name in registry.families.names()]
