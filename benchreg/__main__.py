"""`python -m benchreg ...`: the Hydra app (a run, or a sweep with `-m`), plus `--version` and the
subcommands `tasks`, `analyze`, `report`, `compare`, `view` and `import` (each has `--help`)."""

from __future__ import annotations

import atexit
import os
import re
import sys
import threading

SUBCOMMANDS = ("analyze", "tasks", "report", "compare", "view", "import")


# Set before numpy loads OpenBLAS: benchreg's matrix products are small (a bootstrap's resample
# counts times a few columns); OpenBLAS's extra threads spin between them and took more time than
# they saved (PromptCBLUE 80k sweep: 7.6 s with one thread, 8.5 s with two, 2 cores), and more
# with the sweep's processes competing for the cores. An explicit setting is kept.
BLAS_THREADS = "1"


def main() -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", BLAS_THREADS)
    args = sys.argv[1:]
    if args[:1] == ["--version"]:
        from benchreg import __version__

        print(f"benchreg {__version__}")
        sys.exit(0)
    if args[:1] and args[0] in SUBCOMMANDS:
        from benchreg.app.commands import main as command_main

        sys.exit(command_main(args))
    if args and re.fullmatch(r"[A-Za-z][\w-]*", args[0]):  # a word, not key=value or -m
        import difflib

        near = difflib.get_close_matches(args[0], SUBCOMMANDS, n=1, cutoff=0.6)
        hint = f"did you mean {near[0]}? " if near else ""
        print(
            f"error: {args[0]!r} is no subcommand and no key=value override ({hint}subcommands: "
            f"{', '.join(SUBCOMMANDS)}; see python -m benchreg --help)",
            file=sys.stderr,
        )
        sys.exit(2)
    from benchreg.app import lifetime

    lifetime.collector_off_for_start_up()  # resumed as the first job starts
    from benchreg.app.main import main as app_main

    app_main()


def cli() -> None:
    """:func:`main` as a command: when it is done, the process ends without freeing what it
    built (a run holds every sample; freeing 100,000 of them one by one takes longer than some
    whole runs), as mypy does. Exit handlers run and output is flushed first; a process with
    threads still running, under a profiler or tracer (cProfile, coverage: they write their
    results at exit), or with an error on its way out, exits the normal way."""
    from benchreg.app import lifetime

    lifetime.end_without_freeing()
    try:
        main()
        code: int | str | None = 0
    except SystemExit as stop:
        code = stop.code
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if any(not t.daemon for t in others) or sys.getprofile() or sys.gettrace():
        sys.exit(code)
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()  # logging.shutdown, loguru's sinks, multiprocessing's clean-up
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        code = code or 0
    os._exit(code or 0)


if __name__ == "__main__":
    cli()
