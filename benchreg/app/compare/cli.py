"""`compare` on the command line: compare (and gate), write the files, print the answer."""

from __future__ import annotations

import textwrap
from pathlib import Path

from benchreg.app.compare.comparison import compare
from benchreg.app.compare.gate import INCOMPLETE, NO_GO
from benchreg.app.compare.page import markdown, write_comparison
from benchreg.app.compare.render import gate_lines, headline, summary_line
from benchreg.app.compare.results import ALPHA
from benchreg.core.runfolder import refuse_inside_run_folder

EXIT_GO, EXIT_NO_GO, EXIT_INCOMPLETE = 0, 1, 2


def run(
    argv_a: Path,
    argv_b: Path | None,
    a: str | None,
    b: str | None,
    out: Path | None,
    n_boot: int,
    seed: int,
    *,
    margin: float | None = None,
    alpha: float = ALPHA,
) -> int:
    """Both sweeps are checked and compared (and gated, with ``margin``) before anything is
    written. Exit 0, or with the gate 0 for GO, 1 for NO-GO and 2 when some task could not be
    gated (INCOMPLETE: no decision)."""
    from benchreg.app import logs
    from benchreg.app.report import headline as headline_view

    result = compare(argv_a, argv_b, a, b, n_boot=n_boot, seed=seed, alpha=alpha, margin=margin)
    target = out if out is not None else argv_a / "compare"
    refuse_inside_run_folder(target, fix="pass --out DIR outside the run folder")
    written = write_comparison(result, target)
    if logs.verbose():
        print(markdown(result))
    else:
        print(headline_view.text(headline(result)))
        print()
        print(summary_line(result))
    if result.gate is not None:
        print()
        width = headline_view.terminal_width()
        for line in gate_lines(result.gate):
            print(textwrap.fill(line, width, subsequent_indent="    ", break_on_hyphens=False))
    for path in written:
        print(f"wrote {path}")
    verdict = result.gate.verdict if result.gate is not None else None
    return {NO_GO: EXIT_NO_GO, INCOMPLETE: EXIT_INCOMPLETE}.get(verdict or "", EXIT_GO)
