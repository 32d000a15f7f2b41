"""`python -m benchreg ...`: the Hydra app (a run, or a sweep with `-m`), plus `--version` and the
subcommands `tasks`, `analyze`, `report`, `compare`, `view` and `import` (each has `--help`)."""

from __future__ import annotations

import difflib
import re
import sys

SUBCOMMANDS = ("analyze", "tasks", "report", "compare", "view", "import")


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--version"]:
        from benchreg import __version__

        print(f"benchreg {__version__}")
        sys.exit(0)
    if args[:1] and args[0] in SUBCOMMANDS:
        from benchreg.app.commands import main as command_main

        sys.exit(command_main(args))
    if args and re.fullmatch(r"[A-Za-z][\w-]*", args[0]):  # a word, not key=value or -m
        near = difflib.get_close_matches(args[0], SUBCOMMANDS, n=1, cutoff=0.6)
        hint = f"did you mean {near[0]}? " if near else ""
        print(
            f"error: {args[0]!r} is no subcommand and no key=value override ({hint}subcommands: "
            f"{', '.join(SUBCOMMANDS)}; see python -m benchreg --help)",
            file=sys.stderr,
        )
        sys.exit(2)
    from benchreg.app.main import main as app_main

    app_main()


if __name__ == "__main__":
    main()
