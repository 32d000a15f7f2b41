"""`python -m bench._rss CMD...`: run CMD; print its wall and peak RSS (JSON) on stderr.

`peak_rss_mib` is CMD's own peak (exact, from the kernel); `tree_peak_rss_mib` the larger of that
and the largest sum, over CMD and every process under it (load workers, pool workers), of their
proportional set sizes (`Pss` in /proc/PID/smaps_rollup: a page shared by n processes counts 1/n
in each, so a fork sharing its parent's pages, or one that has not exec'd yet, is not counted
twice; a lone process is read from its VmRSS, which costs nothing), sampled every 20 ms (Linux;
null elsewhere): it may miss a peak shorter than that. The PSS sum is read at most every
:data:`PSS_EVERY_S`, and only while the VmRSS sum (its upper bound) is above the peak so far:
each read of smaps_rollup walks the process's page tables (11 ms for a 350 MB process here), so
reading two such processes every 20 ms took a whole core of a 2-core machine from the command
being measured (a forked PromptCBLUE sweep: about a second of its wall).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path


def _mib(pid: int, *, proportional: bool) -> float:
    sources = (("smaps_rollup", "Pss:"),) if proportional else ()
    for name, key in (*sources, ("status", "VmRSS:")):
        try:
            for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
                if line.startswith(key):
                    return int(line.split()[1]) / 1024
        except (OSError, ValueError):
            continue
    return 0.0


def _tree(pid: int) -> list[int]:
    pids = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
                pids += _tree(int(child))
    except OSError:
        pass
    return pids


PSS_EVERY_S = 0.25


def _sample(pid: int, peak: list[float], done: threading.Event) -> None:
    # PSS only while there are several processes, and not often (see the module)
    last_pss = -PSS_EVERY_S
    while not done.wait(0.02):
        pids = _tree(pid)
        resident = sum(_mib(p, proportional=False) for p in pids)
        if len(pids) == 1 or resident <= peak[0]:
            peak[0] = max(peak[0], resident)  # exact for one process; else no new peak
        elif time.perf_counter() - last_pss >= PSS_EVERY_S:
            last_pss = time.perf_counter()
            peak[0] = max(peak[0], sum(_mib(p, proportional=True) for p in pids))


tic = time.perf_counter()
child = subprocess.Popen(sys.argv[1:])
tree_peak, finished = [0.0], threading.Event()
sampler = threading.Thread(target=_sample, args=(child.pid, tree_peak, finished), daemon=True)
sampler.start()
_, status, usage = os.wait4(child.pid, 0)
finished.set()
sampler.join()
child.returncode = os.waitstatus_to_exitcode(status)
wall = time.perf_counter() - tic
own = usage.ru_maxrss / 1024
tree = max(tree_peak[0], own) if os.path.isdir("/proc") else None
print(json.dumps({"wall": wall, "peak_rss_mib": own, "tree_peak_rss_mib": tree}), file=sys.stderr)
sys.exit(child.returncode)
