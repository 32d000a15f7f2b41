"""A command's large objects, left for the process's end to drop instead of freed one by one.

`python -m benchreg` (:func:`benchreg.__main__.cli`) ends its process without freeing what it
built (as mypy does): freeing a run's 100,000 samples object by object takes longer than some
whole runs. A single run hands its task and evaluation here, so that they are not freed when its
functions return either. Called in-process (tests, a library user), nothing is kept."""

from __future__ import annotations

from typing import Any

_state: dict[str, Any] = {"ends_without_freeing": False, "kept": []}


def end_without_freeing() -> None:
    """This process exits through :func:`benchreg.__main__.cli`'s hard exit."""
    _state["ends_without_freeing"] = True


def keep_until_exit(*objects: Any) -> None:
    """Keep ``objects`` alive to the process's end when it ends without freeing, else nothing."""
    if _state["ends_without_freeing"]:
        _state["kept"].extend(objects)
