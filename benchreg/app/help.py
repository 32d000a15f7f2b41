"""`python -m benchreg --help` from the config files alone, and what they say about the app config.

The text is the app config's own help template (conf/config.yaml, `hydra.help.template`: the one
copy, which Hydra renders for `--help` with overrides), filled in here without composing the
config or importing any family: the config groups and their options come from the option files
of `conf/<group>/` and of each family's `conf/<group>/`, the config from conf/config.yaml and the
default option files, with their comments. The importers are named by `import --help` (listing
them imports every family). tests/app/test_commands.py checks the text against Hydra's rendering.
"""

from __future__ import annotations

import re
import string
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from benchreg.core.resources import conf_dir

CONFIG_FILE = "config.yaml"
STORED_GROUPS = {"roots"}  # groups whose one option is a node stored in code, not a file
_TOP_KEY = re.compile(r"[A-Za-z_][\w-]*:")


def render() -> str:
    """The help text, as Hydra prints it for the template (without its final line break)."""
    template = app_config()["hydra"]["help"]["template"]
    return string.Template(template).substitute(
        APP_CONFIG_GROUPS=groups_section(), CONFIG=config_section()
    )


def load_yaml(text: str) -> Any:
    """YAML as Hydra's OmegaConf reads the config files (tests/app/test_config.py checks)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@cache
def app_config() -> dict[str, Any]:
    """conf/config.yaml as plain data (its `defaults` list and `hydra` node included)."""
    data = load_yaml((conf_dir() / CONFIG_FILE).read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def default_options() -> dict[str, str]:
    """The app config's defaults list: group -> its default option (Hydra's own groups left
    out)."""
    chosen: dict[str, str] = {}
    for entry in app_config().get("defaults", []):
        if isinstance(entry, dict):
            for group, option in entry.items():
                if not str(group).startswith("override "):
                    chosen[str(group)] = str(option)
    return chosen


@cache
def family_folders() -> dict[str, Path]:
    """Each family's package folder, by name, importing no family."""
    from benchreg.core.registry import family_folders as registered

    return registered()


def config_roots() -> list[Path]:
    """Where Hydra finds the app's config groups: conf/, then each family's `conf/` (the
    search path plugin in hydra_plugins/benchreg_searchpath adds them in this order)."""
    from benchreg.core.registry import FAMILY_CONF

    families = [folder / FAMILY_CONF for folder in family_folders().values()]
    return [conf_dir(), *(folder for folder in families if folder.is_dir())]


@cache
def group_options() -> dict[str, list[str]]:
    """Every app config group (`hydra/...` left out) -> its options, sorted, as Hydra lists them."""
    found: dict[str, set[str]] = {}
    for root in config_roots():
        for path in root.rglob("*.yaml"):
            group = path.parent.relative_to(root).as_posix()
            if group != "." and group.split("/")[0] != "hydra":
                found.setdefault(group, set()).add(path.stem)
    for group in STORED_GROUPS:
        found.setdefault(group, set()).add(default_options()[group])
    return {group: sorted(found[group]) for group in sorted(found)}


def option_file(group: str, option: str) -> Path | None:
    """The file of ``group=option`` (the last on the search path wins, as in Hydra)."""
    for root in reversed(config_roots()):
        path = root / group / f"{option}.yaml"
        if path.is_file():
            return path
    return None


def groups_section() -> str:
    return "".join(f"{group}: {', '.join(options)}\n" for group, options in group_options().items())


def config_section() -> str:
    """The composed app config in Hydra's order (the defaults list's groups, then the config's
    own keys), with the comments of its files."""
    parts: list[str] = []
    comments = _defaults_comments()
    for group, option in default_options().items():
        path = option_file(group, option)
        head = f"{group}:{comments.get(group, '')}"
        if path is not None:
            body = path.read_text("utf-8").splitlines()
        else:  # the `roots` node (benchreg.app.config.register_family_roots): one key a family
            body = [f"{family}: null" for family in family_folders()]
        parts += [head, *(f"  {line}" if line.strip() else "" for line in body)]
    for key, lines in _top_level_blocks((conf_dir() / CONFIG_FILE).read_text("utf-8")):
        if key not in ("defaults", "hydra"):
            parts += lines
    while parts and not parts[0].strip():
        parts.pop(0)
    return "\n".join(parts).rstrip() + "\n"


def _defaults_comments() -> dict[str, str]:
    """The comment on a group's line of the defaults list (`- roots: families   # ...`)."""
    found = {}
    for line in (conf_dir() / CONFIG_FILE).read_text("utf-8").splitlines():
        match = re.match(r"\s*-\s*([\w/]+)\s*:\s*\S+\s+(#.*)$", line)
        if match:
            found[match.group(1)] = f"  {match.group(2)}"
    return found


def _top_level_blocks(text: str) -> list[tuple[str, list[str]]]:
    """The file's top-level keys, each with its lines: the comments right above it, its own
    line and the indented lines under it."""
    blocks: list[tuple[str, list[str]]] = []
    pending: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            pending.append(line)
        elif _TOP_KEY.match(line):
            blocks.append((line.split(":", 1)[0], [*pending, line]))
            pending = []
        elif blocks:
            blocks[-1][1].extend([*pending, line])
            pending = []
    return blocks
