"""What a family tells the core about itself: its embedded sample, prompts and key packages
(registered with :func:`benchreg.core.registry.register_family`)."""

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
