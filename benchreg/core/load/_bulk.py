"""Bulk data built without the cyclic garbage collector walking it again and again."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while bulk data is decoded, validated or scored.

    Decoded JSON holds no reference cycles, but every container it allocates counts towards the
    collector's thresholds, so building 100,000 records runs full collections over an ever larger
    heap (about 40% of such a load). Reference counting still frees everything. When the block
    ends, what it allocated is moved out of the collector's sight (``gc.freeze``) and the
    collector resumes if it was on: otherwise its next pass would walk all of it at once."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()
