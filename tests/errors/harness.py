"""Run the benchreg CLI on a bad input, in-process (fast) or as a real subprocess (slow), and
check the promise: exit code 2, exactly one ERROR line naming the place, no traceback, and every
file that existed before untouched."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    def error_lines(self) -> list[str]:
        lines = [ln for ln in self.text.splitlines() if ln.startswith(("ERROR", "error:"))]
        return lines


def snapshot(folder: Path) -> dict[str, str]:
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with contextlib.suppress(OSError):
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def run_in_process(args: list[str], cwd: Path, env: dict[str, str]) -> Outcome:
    """`python -m benchreg ARGS` in this process (Hydra and the app state are reset)."""
    from hydra.core.global_hydra import GlobalHydra

    import benchreg.__main__ as entry
    from benchreg.app import callbacks, main

    old_argv, old_cwd, old_env = sys.argv, Path.cwd(), dict(os.environ)
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        os.chdir(cwd)
        os.environ.update(env)
        sys.argv = ["benchreg", *args]
        main._state["failures"] = 0
        callbacks.SWEEP_RESULT.clear()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                entry.main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:  # a traceback: exactly what the catalogue must never see
                import traceback

                err.write(traceback.format_exc())
                code = 1
    finally:
        sys.argv = old_argv
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)
        GlobalHydra.instance().clear()
        from loguru import logger

        logger.remove()
    return Outcome(code, out.getvalue(), err.getvalue())


def run_cli(args: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> Outcome:
    proc = subprocess.run(
        [sys.executable, "-m", "benchreg", *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        input=stdin,
    )
    return Outcome(proc.returncode, proc.stdout, proc.stderr)
