"""Writing leaderboard.html, leaderboard.md and leaderboard.csv: each refused, before any is
written, when a file of that name exists and is not a leaderboard (no marker in it)."""

from __future__ import annotations

from pathlib import Path

from benchreg.app.leaderboard import render
from benchreg.app.leaderboard.table import Board
from benchreg.core.errors import BenchregError
from benchreg.core.io import atomic_write_text
from benchreg.core.runfolder import refuse_inside_run_folder

NAMES = ("leaderboard.html", "leaderboard.md", "leaderboard.csv")


def check_targets(out: Path) -> list[Path]:
    """The three paths in ``out``; a file there that no leaderboard wrote is bad input."""
    refuse_inside_run_folder(out, fix="pass --out DIR outside the run folder")
    if out.exists() and not out.is_dir():
        raise BenchregError("--out is a file, not a folder", where=out, fix="pass a folder")
    targets = [out / name for name in NAMES]
    for path in targets:
        if path.is_dir() or (path.exists() and not _is_leaderboard(path)):
            raise BenchregError(
                "refusing to overwrite a file that is not a leaderboard",
                where=path,
                fix="move it away, or write the leaderboard elsewhere with --out DIR",
            )
    return targets


def _is_leaderboard(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(16384)
    except OSError:
        return False
    if path.suffix == ".csv":
        return head.startswith(",".join(render.CSV_COLUMNS).encode("utf-8"))
    return render.MARKER.encode("utf-8") in head


def write(board: Board, shown: render.Layout, targets: list[Path]) -> None:
    html_path, md_path, csv_path = targets
    try:
        html_path.parent.mkdir(parents=True, exist_ok=True)
        # made again from the run folders at any time: renamed into place, no fsync
        atomic_write_text(html_path, render.html(shown), durable=False)
        atomic_write_text(md_path, render.markdown(shown), durable=False)
        atomic_write_text(csv_path, render.csv_text(board), durable=False)
    except OSError as exc:
        raise BenchregError(
            f"cannot write the leaderboard ({exc.strerror or type(exc).__name__})",
            where=exc.filename or html_path.parent,
            fix="pass --out DIR, a folder you can write",
        ) from None
