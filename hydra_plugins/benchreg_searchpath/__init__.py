"""Puts each family's own config groups (``benchreg/families/<family>/conf/``) on Hydra's search
path, so that an option only one family has (e.g. a baseline's chunker) is declared by that
family, not in the app's ``conf/``. :func:`benchreg.app.config.family_groups` lists them; the
app accepts ``<group>=<option>`` for them as Hydra accepts ``+<group>=<option>``."""

from __future__ import annotations

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin


class BenchregFamilyConfigs(SearchPathPlugin):
    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        from benchreg.core.registry import all_families

        for family in all_families():
            if family.conf_dir is not None:
                search_path.append(f"benchreg-{family.name}", f"file://{family.conf_dir}")
