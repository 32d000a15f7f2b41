"""Child processes that must not outlive the process that started them."""

from __future__ import annotations

import os
import sys


def die_with_parent(signum: int, parent: int) -> bool:
    """Ask the kernel to send ``signum`` to this process when its parent dies (Linux
    ``PR_SET_PDEATHSIG``; elsewhere nothing); False when the parent ``parent`` is already gone
    (it died before the request could take effect)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signum)  # PR_SET_PDEATHSIG
    return os.getppid() == parent
