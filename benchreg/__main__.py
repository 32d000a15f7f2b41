"""`python -m benchreg ...`: the Hydra app (a run, or a sweep with `-m`), plus `--version`,
`--help` and the subcommands `tasks`, `analyze`, `report`, `compare`, `view`, `leaderboard`,
`export` and `import` (each has `--help`).

What a person waits for answers without Hydra: `--version`, `--help` (the app's help template,
filled in from the config files: :mod:`benchreg.app.help`), the subcommands, and a run's bad
override (:mod:`benchreg.app.precheck`, the app's own checks before any composition)."""

from __future__ import annotations

import os
import re
import sys

SUBCOMMANDS = (
    "analyze",
    "tasks",
    "report",
    "compare",
    "view",
    "leaderboard",
    "export",
    "import",
)
HELP_FLAGS = ("--help", "-h")


# Set before numpy loads OpenBLAS: benchreg's matrix products are small (a bootstrap's resample
# counts times a few columns), and OpenBLAS's extra threads spin between them, competing with a
# sweep's processes for the cores. An explicit setting is kept.
BLAS_THREADS = "1"


def main() -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", BLAS_THREADS)
    args = sys.argv[1:]
    if args[:1] == ["--version"]:
        from benchreg import __version__

        print(f"benchreg {__version__}")
        sys.exit(0)
    if len(args) == 1 and args[0] in HELP_FLAGS:  # with overrides, Hydra shows what they compose
        sys.exit(print_help())
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
    precheck(args)
    from benchreg.app.main import main as app_main

    app_main()


def print_help() -> int:
    from benchreg.app.help import render

    try:
        print(render())
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`--help | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def precheck(args: list[str]) -> None:
    """A bad override of a run stops here with the app's own line and exit code."""
    from benchreg.app.precheck import check
    from benchreg.core.errors import BenchregError

    try:
        check(args)
    except BenchregError as exc:
        from loguru import logger

        from benchreg.app import logs

        logs.setup()
        logger.error(exc.message)
        sys.exit(exc.exit_code)


def cli() -> None:
    """:func:`main` as a command (the `benchreg` script)."""
    main()


if __name__ == "__main__":
    cli()
