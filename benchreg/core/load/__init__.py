"""The loading door: the one place where a data set's speed is bought.

A family says *what* it loads and calls :func:`load`::

    plan = LoadPlan(
        name="molp2s.samples",            # the cache's name for what is built
        files=(tasks_path, labels_path),  # its content (sha256) is part of the key
        key={"view": view},               # everything else the value depends on
        read=lambda: strict_read(...),    # the one-process read: checks every rule, raises
    )                                     # located errors (file:line, record id)
    rows = load(plan, cache=ctx.cache).value

*How* is decided here, in one place (docs/architecture.md, "The loading door"):

- a value read before from files with the same sha256 (same name, key, benchreg and Python
  versions) comes back from the loaded-data cache on disk, for files of :data:`CACHE_MIN_BYTES`
  or more; a miss reads the files and keeps the value for the next run;
- a value read before by this process from the same unchanged files (a sweep's jobs reading one
  PromptCBLUE split for 16 tasks) comes back from memory (:func:`forget` empties it);
- bulk values are built with the cyclic garbage collector paused (:func:`gc_paused`);
- one process reads: worker processes did not pay on a 2-core machine once the other core is
  busy (docs/scale.md), so there are none; chunks of numpy work that releases the GIL (a TREC
  run's columns) go through :func:`ordered_map`, two threads, results in order.

``cache=False`` (``run.data_cache=false``, or ``BENCHREG_DATA_CACHE=off`` for every run) reads
the files every time. :attr:`Loaded.source` says where a value came from; the loader puts it in
the data set's info, which ``provenance.json`` records and the run's log states.
"""

from benchreg.core.load._bulk import gc_paused
from benchreg.core.load._cache import CACHE_MIN_BYTES, cache_dir, cache_enabled
from benchreg.core.load._door import Loaded, LoadPlan, forget, load
from benchreg.core.load._threads import ordered_map

__all__ = [
    "CACHE_MIN_BYTES",
    "LoadPlan",
    "Loaded",
    "cache_dir",
    "cache_enabled",
    "forget",
    "gc_paused",
    "load",
    "ordered_map",
]
