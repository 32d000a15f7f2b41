"""`python -m benchreg ...`: the Hydra app, plus the `analyze` and `tasks` subcommands."""

from __future__ import annotations

import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("analyze", "tasks"):
        from benchreg.app.commands import main as command_main

        sys.exit(command_main(sys.argv[1:]))
    from benchreg.app.main import main as app_main

    app_main()


if __name__ == "__main__":
    main()
