"""Hydra plugins that expose benchreg's `tasks/` folder as the `task` config group.

- :class:`TaskFolderConfigSource` serves a folder laid out as `<group>/<name>.yaml` (the project's
  `tasks/`) under the config group `task`, so `tasks/molp2s/gap.yaml` is `task=molp2s/gap`.
- :class:`BenchregSearchPathPlugin` adds that folder, plus any folders named in the environment
  variable ``BENCHREG_TASKS_PATH`` (laid out the same way), to Hydra's search path. Folders laid
  out the Hydra way (`<dir>/task/<group>/<name>.yaml`) are added with ``hydra.searchpath``.
"""

from __future__ import annotations

import os
from pathlib import Path

from hydra._internal.core_plugins.file_config_source import FileConfigSource
from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.object_type import ObjectType
from hydra.plugins.config_source import ConfigResult
from hydra.plugins.search_path_plugin import SearchPathPlugin

GROUP = "task"
ENV_VAR = "BENCHREG_TASKS_PATH"


class TaskFolderConfigSource(FileConfigSource):
    """A folder of task entries, served as the config group `task`."""

    @staticmethod
    def scheme() -> str:
        return "benchreg-tasks"

    def _inner(self, config_path: str) -> str | None:
        parts = config_path.strip("/").split("/", 1)
        if parts[0] != GROUP:
            return None
        return parts[1] if len(parts) > 1 else ""

    def _resolve(self, inner: str) -> str:
        """An alias (`aliases:` of an entry) resolves to the entry's file."""
        from benchreg.core.tasks import alias_index

        if inner and not super().is_config(inner):
            target = alias_index(Path(self.path)).get(inner)
            if target is not None:
                return target.relative_to(Path(self.path).resolve()).with_suffix("").as_posix()
        return inner

    def load_config(self, config_path: str) -> ConfigResult:
        inner = self._inner(config_path)
        return super().load_config(self._resolve(inner) if inner is not None else "\0missing")

    def is_group(self, config_path: str) -> bool:
        if config_path.strip("/") == "":
            return True
        inner = self._inner(config_path)
        return inner is not None and super().is_group(inner)

    def is_config(self, config_path: str) -> bool:
        inner = self._inner(config_path)
        return bool(inner) and super().is_config(self._resolve(inner or ""))

    def list(self, config_path: str, results_filter: ObjectType | None) -> list[str]:
        if config_path.strip("/") == "":
            return [GROUP] if results_filter in (None, ObjectType.GROUP) else []
        inner = self._inner(config_path)
        if inner is None:
            return []
        folder = Path(self.path) / inner
        names: set[str] = set()
        for entry in folder.iterdir():
            if entry.is_dir() and entry.name != "__pycache__":
                if results_filter in (None, ObjectType.GROUP):
                    names.add(entry.name)
            elif entry.suffix == ".yaml" and results_filter in (None, ObjectType.CONFIG):
                names.add(entry.stem)
        return sorted(names)


class BenchregSearchPathPlugin(SearchPathPlugin):
    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        from benchreg.resources import tasks_dir

        search_path.append("benchreg", f"benchreg-tasks://{tasks_dir()}")
        for folder in os.environ.get(ENV_VAR, "").split(os.pathsep):
            if folder.strip():
                path = Path(folder).expanduser().resolve()
                search_path.append("benchreg-env", f"benchreg-tasks://{path}")
