"""Subcommands that are not a Hydra job: `analyze <sweep_dir>` and `tasks`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchreg.core.errors import BenchregError


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchreg")
    sub = parser.add_subparsers(dest="command", required=True)
    analyze = sub.add_parser("analyze", help="summarize a sweep dir and run its analyses")
    analyze.add_argument("sweep_dir", type=Path)
    sub.add_parser("tasks", help="list the registered task entries")
    args = parser.parse_args(argv)
    try:
        if args.command == "analyze":
            return _analyze(args.sweep_dir)
        return _tasks()
    except BenchregError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return exc.exit_code


def _analyze(sweep_dir: Path) -> int:
    from benchreg.app.callbacks import summarize_sweep

    if not sweep_dir.is_dir():
        raise BenchregError("not a folder", where=sweep_dir, fix="pass a multirun sweep dir")
    for path in summarize_sweep(sweep_dir):
        print(f"wrote {path}")
    return 0


def _tasks() -> int:
    from benchreg.core.tasks import list_tasks

    for name in list_tasks():
        print(name)
    return 0
