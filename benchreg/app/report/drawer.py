"""A sweep's report figures drawn by a second process, started when the sweep starts.

matplotlib takes longer to import (about 0.4 s of CPU) than a small job takes to run, and a
sweep's figures can only be drawn once every job is done. So a sweep starts this process at
its beginning (:meth:`FigureDrawer.start`): it imports matplotlib, the figure code and every
family's report part while the jobs run, then waits. At the end the sweep hands it the sweep
folder; it draws exactly what :func:`benchreg.app.report._figures` draws in-process (it calls
it) and sends the SVG text back as one JSON line. Whatever goes wrong (no matplotlib, the
process died, a timeout, a reply that is not one), the report draws its figures in-process as
before, so the drawer changes when figures are drawn, never what they are.

The process reads its one request from stdin and ends at EOF: when the sweep's process ends,
however it ends, so does this one. It ignores Ctrl-C (the sweep handles that and then closes the
pipe) and writes nothing to disk.
"""

from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

DRAW_TIMEOUT_S = 300.0  # the longest the report waits for the drawer before drawing itself


class FigureDrawer:
    """The parent's side: start the process, ask for a sweep's figures once, stop it."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        if self._process is not None or importlib.util.find_spec("matplotlib") is None:
            return
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", __name__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
            )
        except OSError:
            self._process = None

    @property
    def started(self) -> bool:
        return self._process is not None

    def figures(
        self, sweep_dir: Path, notes: list[str], timeout: float = DRAW_TIMEOUT_S
    ) -> dict[str, tuple[str, str]] | None:
        """name -> (svg, caption) as :func:`benchreg.app.report._figures` gives them (its notes
        added to ``notes``), or None when the drawer cannot give them (then draw in-process)."""
        process, self._process = self._process, None
        if process is None:
            return None
        request = json.dumps({"sweep_dir": str(Path(sweep_dir).resolve())}) + "\n"
        try:
            out, _ = process.communicate(request, timeout=timeout)
            reply = json.loads(out)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            _end(process)
            return None
        if process.returncode != 0 or not isinstance(reply, dict) or "figures" not in reply:
            return None
        notes.extend(str(note) for note in reply.get("notes", []))
        return {
            str(name): (str(svg), str(caption)) for name, (svg, caption) in reply["figures"].items()
        }

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            _end(process)


def _end(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()


def _serve() -> dict[str, Any]:
    from benchreg.app.report import _figures, read_sweep
    from benchreg.core import figures, registry  # noqa: F401  (matplotlib: imported now)

    registry.load_components()  # every family's report part
    line = sys.stdin.readline()
    if not line:
        return {}
    sweep_dir = Path(json.loads(line)["sweep_dir"])
    notes: list[str] = []
    drawn = _figures(sweep_dir, read_sweep(sweep_dir), notes)
    return {"figures": drawn, "notes": notes}


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        reply = _serve()
    except Exception as exc:  # the parent draws in-process, where the error is reported
        reply = {"error": f"{type(exc).__name__}: {exc}"}
    if reply:
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0 if "figures" in reply or not reply else 1


if __name__ == "__main__":
    sys.exit(main())
