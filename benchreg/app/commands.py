"""Subcommands that are not a Hydra job: `analyze <sweep_dir>`, `tasks`, `report <sweep_dir>` and
`compare <sweep A> [<sweep B>]`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import NoReturn

from benchreg.core.errors import BenchregError

SEARCHPATH_OVERRIDE = "hydra.searchpath="
SWEEP_TOOLS = ("analyze", "report", "compare")


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line (`error: ...`), exit code 2, like every other refusal."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: list[str]) -> int:
    parser = OneLineParser(prog="python -m benchreg")
    sub = parser.add_subparsers(dest="command", required=True)
    analyze = sub.add_parser("analyze", help="summarize a sweep dir and run its analyses")
    analyze.add_argument("sweep_dir", type=Path)
    tasks = sub.add_parser(
        "tasks",
        help="list the registered task entries",
        description="List every task entry: family, views, sample count on the embedded sample "
        "data, description. Folders of your own: --searchpath DIR, "
        "hydra.searchpath=[file:///DIR] or $BENCHREG_TASKS_PATH.",
    )
    tasks.add_argument("--json", action="store_true", help="print a JSON list (for scripts)")
    tasks.add_argument(
        "--searchpath",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="a folder of task entries (DIR/task/<group>/<name>.yaml or DIR/<group>/<name>.yaml)",
    )
    tasks.add_argument("overrides", nargs="*", help="hydra.searchpath=[file:///DIR,...]")
    report = sub.add_parser(
        "report",
        help="write a sweep's HTML report, figures and markdown",
        description="Write <sweep_dir>/report/: index.html (self-contained), report.md and "
        "figures/*.svg. Figures need matplotlib: pip install 'benchreg[reports]'.",
    )
    report.add_argument("sweep_dir", type=Path)
    report.add_argument(
        "--out", type=Path, default=None, help="folder (default <sweep_dir>/report)"
    )
    comp = sub.add_parser(
        "compare",
        help="paired per-sample comparison of two systems",
        description="Compare two sweeps (or two models of one sweep) task by task: paired "
        "bootstrap CI of the mean difference, exact McNemar (0/1 scores) or Wilcoxon, Holm "
        "correction across tasks. Refuses when the data sha256 differ.",
    )
    comp.add_argument("sweep_a", type=Path)
    comp.add_argument("sweep_b", type=Path, nargs="?", default=None)
    comp.add_argument("--a", default=None, metavar="MODEL", help="model of side A (name or id)")
    comp.add_argument("--b", default=None, metavar="MODEL", help="model of side B (name or id)")
    comp.add_argument("--out", type=Path, default=None, help="folder (default <sweep_a>/compare)")
    comp.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    comp.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        if args.command == "analyze":
            return _analyze(args.sweep_dir)
        if args.command == "report":
            return _report(args.sweep_dir, args.out)
        if args.command == "compare":
            from benchreg.app.compare import run

            return run(
                args.sweep_a, args.sweep_b, args.a, args.b, args.out, args.bootstrap, args.seed
            )
        return _tasks(args.searchpath + _searchpath_overrides(args.overrides), args.json)
    except BenchregError as exc:
        print(f"error: {one_line(exc.message)}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # the reader went away (`tasks | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        if args.command not in SWEEP_TOOLS:
            raise
        # a file of a shape the checks do not know: one line, never a traceback
        print(
            f"error: {args.command}: cannot read the sweep ({type(exc).__name__}: "
            f"{one_line(str(exc))[:300]}) (check the files of the sweep folder; if they are as "
            "benchreg wrote them, this is a bug: please report it)",
            file=sys.stderr,
        )
        return 2


def one_line(text: str) -> str:
    """``text`` on one line (a path or message holding line breaks would split the error)."""
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def _searchpath_overrides(overrides: list[str]) -> list[Path]:
    from benchreg.app.config import searchpath_folders

    folders: list[Path] = []
    for text in overrides:
        if not text.startswith(SEARCHPATH_OVERRIDE):
            raise BenchregError(
                f"unexpected argument {text!r}", fix="tasks takes only hydra.searchpath=[...]"
            )
        entries = text.removeprefix(SEARCHPATH_OVERRIDE).strip("[]").split(",")
        folders += searchpath_folders(entry.strip().strip("'\"") for entry in entries)
    return folders


def _analyze(sweep_dir: Path) -> int:
    """Summary files and analyses of a sweep, written only after every file it reads passed
    its check (:func:`benchreg.core.analysis.check_sweep`): a damaged sweep is one error line
    and nothing written."""
    from benchreg.app.callbacks import report_sweep
    from benchreg.core.analysis import check_sweep

    check_sweep(sweep_dir)
    return 2 if report_sweep(sweep_dir) else 0


def _report(sweep_dir: Path, out: Path | None) -> int:
    from benchreg.app.report import write_report

    result = write_report(sweep_dir, out)  # checks the sweep before it writes anything
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    for path in (result.html, result.markdown, *result.figures):
        print(f"wrote {path}")
    return 0


def _tasks(folders: list[Path], as_json: bool) -> int:
    from benchreg.app.listing import list_entries, render

    rows = list_entries([folder.expanduser().resolve() for folder in folders])
    print(json.dumps(rows, indent=2, ensure_ascii=False) if as_json else render(rows))
    return 0
