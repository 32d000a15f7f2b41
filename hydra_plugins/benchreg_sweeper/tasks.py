"""`task=glob(...)` over benchreg's registered entries.

`task` is a plain string, not a config group, so Hydra cannot expand a glob over it: the glob is
matched against :func:`benchreg.core.entries.list_tasks` (nested names such as `molp2s/*`; entries
or folders starting with `_` and aliases never match) before the sweep expands its values.
"""

from __future__ import annotations

from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Glob

TASK_KEY = "task"


def expand_task_overrides(arguments: list[str], folders: list[Path]) -> list[str]:
    """Replace `task=glob(...)` by the matching names (an empty glob is an error; an unknown
    plain name is left to its own job, which fails naming the nearest entries)."""
    from benchreg.core.entries import list_tasks

    parser = OverridesParser.create()
    expanded: list[str] = []
    for text, override in zip(arguments, parser.parse_overrides(arguments), strict=True):
        if override.key_or_group != TASK_KEY or override.is_delete():
            expanded.append(text)
            continue
        value = override.value()
        if isinstance(value, Glob):
            known = list_tasks(folders)
            names = value.filter(known)
            if not names:
                raise empty_glob(text, value, known)
            text = f"{override.get_key_element()}={','.join(names)}"
        expanded.append(text)
    return expanded


def empty_glob(text: str, glob: Glob, known: list[str]) -> Exception:
    from benchreg.core.entries import nearest
    from benchreg.core.errors import BenchregError

    groups = sorted({f"{name.split('/')[0]}/*" for name in known})
    near = [name for pattern in glob.include for name in nearest(pattern, [*groups, *known])]
    hint = f"nearest: {', '.join(near)}; " if near else ""
    return BenchregError(
        f"{text!r} matches no task", fix=f"{hint}`python -m benchreg tasks` lists them"
    )
