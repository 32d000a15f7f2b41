"""`python -m benchreg ...`: the Hydra app, plus `--version` and the `analyze`, `tasks`, `report`
and `compare` subcommands."""

from __future__ import annotations

import sys

SUBCOMMANDS = ("analyze", "tasks", "report", "compare")


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--version"]:
        from benchreg import __version__

        print(f"benchreg {__version__}")
        sys.exit(0)
    if args[:1] and args[0] in SUBCOMMANDS:
        from benchreg.app.commands import main as command_main

        sys.exit(command_main(args))
    from benchreg.app.main import main as app_main

    app_main()


if __name__ == "__main__":
    main()
