"""A command's large objects, left for the process's end to drop instead of freed one by one.

`python -m benchreg` (:func:`benchreg.__main__.cli`) ends its process without freeing what it
built (as mypy does): freeing a run's 100,000 samples object by object takes longer than some
whole runs. A single run hands its task and evaluation here, so that they are not freed when its
functions return either. Called in-process (tests, a library user), nothing is kept."""

from __future__ import annotations

import gc
from typing import Any

_state: dict[str, Any] = {"ends_without_freeing": False, "kept": []}


def end_without_freeing() -> None:
    """This process exits through :func:`benchreg.__main__.cli`'s hard exit."""
    _state["ends_without_freeing"] = True


def keep_until_exit(*objects: Any) -> None:
    """Keep ``objects`` alive to the process's end when it ends without freeing, else nothing."""
    if _state["ends_without_freeing"]:
        _state["kept"].extend(objects)


def collector_off_for_start_up() -> None:
    """Pause the cyclic garbage collector while the command imports and composes its config:
    those objects live to the end, and the collections over them (about 0.05 s of a 1.9 s run)
    free nothing. :func:`start_up_done` resumes it."""
    if gc.isenabled():
        gc.disable()
        _state["collector_paused"] = True


def start_up_done() -> None:
    """Resume the collector (if :func:`collector_off_for_start_up` paused it), what start-up
    built moved out of its sight (``gc.freeze``: it is never garbage)."""
    if _state.pop("collector_paused", False):
        gc.freeze()
        gc.enable()
