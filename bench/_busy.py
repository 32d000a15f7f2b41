"""Both cores kept busy while a benchmark measures: the "busy machine" of bench/README.md.

``python -m bench._busy SECONDS`` spins one CPU (pure Python arithmetic, no memory, no I/O) until
SECONDS have passed or it is killed; :func:`busy` starts one such process per CPU for the time
of a block and stops them at its end. Each stops by itself at its deadline whatever happens to
the benchmark (at most :data:`MAX_SECONDS`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator

MAX_SECONDS = 3 * 3600.0


@contextlib.contextmanager
def busy(processes: int, seconds: float = MAX_SECONDS) -> Iterator[None]:
    """``processes`` spinning processes while the block runs (none for 0)."""
    seconds = min(seconds, MAX_SECONDS)
    spinners = [
        subprocess.Popen([sys.executable, "-m", "bench._busy", str(seconds)])
        for _ in range(processes)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def processes_wanted() -> int:
    """``BENCH_BUSY``: ``cores`` (one spinner per CPU), a number, or unset (none)."""
    setting = os.environ.get("BENCH_BUSY", "").strip()
    if not setting:
        return 0
    return os.cpu_count() or 1 if setting == "cores" else max(0, int(setting))


def spin(seconds: float) -> None:
    deadline = time.monotonic() + min(seconds, MAX_SECONDS)
    x = 0
    while time.monotonic() < deadline:
        for _ in range(100_000):
            x = (x * 1_103_515_245 + 12_345) & 0x7FFFFFFF


if __name__ == "__main__":
    spin(float(sys.argv[1]))
