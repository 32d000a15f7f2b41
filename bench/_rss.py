"""`python -m bench._rss CMD...`: run CMD; print its wall and own peak RSS (JSON) on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

tic = time.perf_counter()
child = subprocess.Popen(sys.argv[1:])
_, status, usage = os.wait4(child.pid, 0)
child.returncode = os.waitstatus_to_exitcode(status)
wall = time.perf_counter() - tic
print(json.dumps({"wall": wall, "peak_rss_mib": usage.ru_maxrss / 1024}), file=sys.stderr)
sys.exit(child.returncode)
