"""Subcommands that are not a Hydra job: `tasks`, `analyze <sweep_dir>`, `report <sweep_dir>`,
`compare <sweep A> [<sweep B>]`, `view <sweep or run folder>`, `leaderboard <folder>...`,
`export mlflow|wandb <folder>...` and `import <source> ...`.

Each has `--help`; a usage error or bad input is one line (`error: ...`) and exit code 2; log
lines have the short form of runs (:mod:`benchreg.app.logs`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeAlias

from benchreg.core.errors import BenchregError

SEARCHPATH_OVERRIDE = "hydra.searchpath="
SWEEP_TOOLS = ("analyze", "report", "compare", "view", "leaderboard", "export")
PROG = "python -m benchreg"
EPILOG = (
    f"Runs and sweeps: {PROG} task=<family>/<name> [view=...] [model=...] [key=value ...], "
    f"{PROG} -m key=a,b (a sweep); {PROG} --help lists every option."
)


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line (`error: ...`), exit code 2, like every other refusal."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: list[str]) -> int:
    from benchreg.app import logs

    logs.setup()
    if argv[:1] == ["import"]:
        return import_command(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
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


Subparsers: TypeAlias = "argparse._SubParsersAction[OneLineParser]"


def build_parser() -> OneLineParser:
    """The subcommands' parser (`import` parses its own arguments: each importer has its own)."""
    parser = OneLineParser(prog=PROG, epilog=EPILOG)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for add in (
        _analyze_parser,
        _tasks_parser,
        _report_parser,
        _compare_parser,
        _view_parser,
        _leaderboard_parser,
        _export_parser,
    ):
        add(sub)
    sub.add_parser(
        "import",
        help="import an upstream data set into a data root (import --help lists the sources)",
        add_help=False,
    )
    return parser


def _analyze_parser(sub: Subparsers) -> None:
    analyze = sub.add_parser(
        "analyze",
        help="write a sweep's summary and analyses again",
        description="Write <sweep_dir>/summary.csv, summary.md and analysis_*.{md,json} again "
        "and print each family's headline (BENCHREG_VERBOSE=1: the per-job table too).",
        epilog=EPILOG,
    )
    analyze.add_argument("sweep_dir", type=Path)


def _tasks_parser(sub: Subparsers) -> None:
    tasks = sub.add_parser(
        "tasks",
        help="list the registered task entries",
        description="List every task entry: family, views, description (each entry composed "
        "and checked against the task spec; one that fails is listed as BROKEN with its error). "
        "--check also binds each entry's components (a misspelt component name is BROKEN) and "
        "counts the samples of its default view on the embedded sample data; it imports every "
        "family, so it takes longer. Folders of your own: --searchpath DIR, "
        "hydra.searchpath=[file:///DIR] or $BENCHREG_TASKS_PATH.",
        epilog=EPILOG,
    )
    tasks.add_argument("--json", action="store_true", help="print a JSON list (for scripts)")
    tasks.add_argument(
        "--check",
        action="store_true",
        help="bind each entry's components and count its samples on the embedded sample data",
    )
    tasks.add_argument(
        "--searchpath",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="a folder of task entries (DIR/tasks/<group>/<name>.yaml or DIR/<group>/<name>.yaml)",
    )
    tasks.add_argument("overrides", nargs="*", help="hydra.searchpath=[file:///DIR,...]")


def _report_parser(sub: Subparsers) -> None:
    report = sub.add_parser(
        "report",
        help="write a sweep's HTML report, figures, markdown and sample browser",
        description="Write <sweep_dir>/report/: index.html (self-contained: each family's "
        "headline first), report.md, figures/*.svg and samples.html (the sample browser). "
        "Figures need pygal: pip install 'benchreg[reports]'.",
        epilog=EPILOG,
    )
    report.add_argument("sweep_dir", type=Path)
    report.add_argument(
        "--out", type=Path, default=None, help="folder (default <sweep_dir>/report)"
    )


def _compare_parser(sub: Subparsers) -> None:
    comp = sub.add_parser(
        "compare",
        help="paired per-sample comparison of two systems",
        description="Compare two sweeps (or two models of one sweep) task by task: paired "
        "bootstrap CI of the mean difference, exact McNemar (0/1 scores) or Wilcoxon, Holm "
        "correction across tasks, and each task's minimum detectable difference (80% power). "
        "Refuses when the data sha256 differ. Writes compare.html (the significant differences "
        "first, then every task, and a figure), compare.md, compare.json and compare.svg. "
        "--gate --margin M: release gate, a one-sided paired test per task of B worse than A by "
        "more than M (Holm across tasks); exit 0 GO, 1 NO-GO (naming the tasks), 2 bad input.",
        epilog=EPILOG,
    )
    comp.add_argument("sweep_a", type=Path)
    comp.add_argument("sweep_b", type=Path, nargs="?", default=None)
    comp.add_argument("--a", default=None, metavar="MODEL", help="model of side A (name or id)")
    comp.add_argument("--b", default=None, metavar="MODEL", help="model of side B (name or id)")
    comp.add_argument("--out", type=Path, default=None, help="folder (default <sweep_a>/compare)")
    comp.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    comp.add_argument("--seed", type=int, default=0)
    comp.add_argument(
        "--gate", action="store_true", help="release gate: exit 0 GO, 1 NO-GO (needs --margin)"
    )
    comp.add_argument(
        "--margin",
        type=float,
        default=None,
        metavar="M",
        help="the regression the gate tolerates, in the primary metric's units (0.05 = 5 points)",
    )
    comp.add_argument(
        "--alpha", type=float, default=0.05, help="level of the tests and of the MDE (0.05)"
    )


def _view_parser(sub: Subparsers) -> None:
    view = sub.add_parser(
        "view",
        help="write the sample browser of a sweep or a run, and print its path",
        description="Write one self-contained HTML page (no network, no server) listing every "
        "sample of a sweep's jobs, or of one run: status, score, messages (when recorded), raw "
        "output, parsed answer and gold; filter by job, status and score, search, click a row "
        "to open it. A sweep's page: <sweep_dir>/report/samples.html; a run's: "
        "<run_dir>.samples.html beside its folder.",
        epilog=EPILOG,
    )
    view.add_argument("folder", type=Path, help="a sweep folder or a run folder")
    view.add_argument("--out", type=Path, default=None, metavar="FILE", help="write it here")
    view.add_argument("--open", action="store_true", help="also open it in a web browser")


def one_line(text: str) -> str:
    """``text`` on one line (a path or message holding line breaks would split the error)."""
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def _searchpath_overrides(overrides: list[str]) -> list[Path]:
    if not overrides:
        return []
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


def _analyze(args: argparse.Namespace) -> int:
    """Summary files and analyses of a sweep, written only after every file it reads passed
    its check (:func:`benchreg.core.analysis.check_sweep`): a damaged sweep is one error line
    and nothing written."""
    from benchreg.app.callbacks import report_sweep
    from benchreg.core.analysis import check_sweep

    check_sweep(args.sweep_dir)
    return 2 if report_sweep(args.sweep_dir) else 0


def _report(args: argparse.Namespace) -> int:
    from benchreg.app.report import write_report

    result = write_report(args.sweep_dir, args.out)  # checks the sweep before it writes anything
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    written = [result.html, result.markdown, *result.figures]
    for path in written + ([result.samples] if result.samples is not None else []):
        print(f"wrote {path}")
    return 0


def import_command(argv: list[str]) -> int:
    """`import <source> [args]`: the importer registered under ``source``
    (``benchreg.core.registry.importers``), called with the arguments after the source; any
    family may register one."""
    from benchreg.core import registry

    names = registry.importers.names()
    known = ", ".join(names) or "(none registered)"
    if not argv:
        print(
            f"error: {PROG} import: name a source (known: {known}; see {PROG} import --help)",
            file=sys.stderr,
        )
        return 2
    if argv[0] in ("-h", "--help"):
        print(f"usage: {PROG} import <source> [options]  ({PROG} import <source> --help)")
        print("Import an upstream data set into a data root. Sources:")
        for name in names:
            summary = _first_line(getattr(registry.importers.get(name), "summary", None) or "")
            print(f"  {name:<20} {summary}".rstrip())
        if not names:
            print("  (none registered)")
        return 0
    source, rest = argv[0], argv[1:]
    if source not in names:
        print(f"error: {PROG} import: unknown source {source!r} (known: {known})", file=sys.stderr)
        return 2
    importer = registry.importers.get(source)
    try:
        return int(importer(rest) or 0)
    except BenchregError as exc:
        print(f"error: {one_line(exc.message)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"error: import {source}: stopped", file=sys.stderr)
        return 130
    except Exception as exc:  # an importer's own failure: one line, never a traceback
        print(
            f"error: import {source}: {type(exc).__name__}: {one_line(str(exc))[:300]} (if the "
            "source folder is as its SOURCE.md describes, this is a bug: please report it)",
            file=sys.stderr,
        )
        return 2


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _leaderboard_parser(sub: Subparsers) -> None:
    board = sub.add_parser(
        "leaderboard",
        help="one table of every finished run under the folders: models x tasks, with CIs",
        description="Read every finished run under the folders (runs and sweeps, any date, any "
        "depth) and print one table: a row per model identity, a column per task, view, primary "
        "metric and data files (short sha256 in the heading), each cell the newest run's value "
        "[95% CI] n/denominator; incomplete, demonstration and not testable runs in words. Writes "
        "leaderboard.html (self-contained), leaderboard.md and leaderboard.csv.",
        epilog=EPILOG,
    )
    board.add_argument(
        "folders",
        type=Path,
        nargs="+",
        metavar="FOLDER",
        help="a run or sweep folder, or any folder holding them (e.g. outputs/)",
    )
    board.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of the three files (default: the current directory); an existing file "
        "there that is not a leaderboard is never overwritten",
    )
    board.add_argument(
        "--task",
        action="append",
        default=[],
        metavar="GLOB",
        help="only tasks matching GLOB, e.g. '<family>/*' (repeatable)",
    )
    board.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME",
        help="only models with this name, label or model_id (a glob; repeatable)",
    )
    board.add_argument(
        "--ref",
        default=None,
        metavar="MODEL",
        help="mark the cells that differ from this model's (paired test per cell, Holm across "
        "the table)",
    )


def _export_parser(sub: Subparsers) -> None:
    export = sub.add_parser(
        "export",
        help="log runs to a tracking server: export mlflow|wandb <run or sweep folder>...",
        description="Log one tracking run per finished job of the folders (run or sweep "
        "folders): params (task, view, model label and id, versions, data and predictions "
        "sha256), metrics (value, CI bounds, n, denominator), metrics.json, provenance.json and "
        "the sweep's report. A job exported before (same fingerprint) is skipped; a run that "
        "is no result (incomplete, not a benchmark, demonstration data) is logged without "
        "metric values, tagged benchreg.status=incomplete|not_a_result|demonstration. "
        "Needs pip install 'benchreg[tracking]'. W&B runs are written offline (no network). "
        "A sweep exports each job as it ends with hydra/callbacks=export_mlflow (or "
        "export_wandb): see docs/results-over-time.md.",
        epilog=EPILOG,
    )
    export.add_argument("target", choices=("mlflow", "wandb"), help="where to log the jobs")
    export.add_argument(
        "folders",
        type=Path,
        nargs="+",
        metavar="FOLDER",
        help="run folders, sweep folders, or folders holding them (e.g. outputs/)",
    )
    mlflow = export.add_argument_group("mlflow")
    mlflow.add_argument(
        "--tracking-uri",
        metavar="URI",
        help="MLflow store: sqlite:///<file>.db, a folder (file store) or a server's URL "
        "(default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db here)",
    )
    mlflow.add_argument("--experiment", metavar="NAME", help="MLflow experiment (benchreg)")
    wandb = export.add_argument_group("wandb (offline runs only; upload with `wandb sync`)")
    wandb.add_argument("--project", metavar="NAME", help="W&B project (benchreg)")
    wandb.add_argument(
        "--dir", type=Path, metavar="DIR", help="where the offline runs go: DIR/wandb/ (.)"
    )


def _leaderboard(args: argparse.Namespace) -> int:
    from benchreg.app.leaderboard import run

    return run(args)


def _export(args: argparse.Namespace) -> int:
    from benchreg.app.tracking import run

    return run(args)


def _view(args: argparse.Namespace) -> int:
    from benchreg.app.view import view as write_view

    return write_view(args.folder, args.out, open_it=args.open)


def _compare(args: argparse.Namespace) -> int:
    from benchreg.app.compare import run
    from benchreg.app.compare.gate import check_options

    check_options(args.gate, args.margin, args.alpha)
    return run(
        args.sweep_a,
        args.sweep_b,
        args.a,
        args.b,
        args.out,
        args.bootstrap,
        args.seed,
        margin=args.margin if args.gate else None,
        alpha=args.alpha,
    )


def _tasks(args: argparse.Namespace) -> int:
    from benchreg.app.listing import list_entries, render

    folders = args.searchpath + _searchpath_overrides(args.overrides)
    rows = list_entries([folder.expanduser().resolve() for folder in folders], check=args.check)
    print(json.dumps(rows, indent=2, ensure_ascii=False) if args.json else render(rows))
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "analyze": _analyze,
    "tasks": _tasks,
    "report": _report,
    "compare": _compare,
    "view": _view,
    "leaderboard": _leaderboard,
    "export": _export,
}
