"""`python -m benchreg compare <sweep A> [<sweep B>] [--a MODEL] [--b MODEL] [--gate --margin M]`:
is one system better than another, by how much, does the difference hold, and could it have
been seen at all?

For every (task, view) that both sides ran, the per-sample scores of the primary metric are paired
on sample id (a note says how many of each side's samples were paired when one side ran a
subset); the mean difference (A - B) gets a paired percentile-bootstrap 95% CI and a test:
exact McNemar when every score is 0/1, else the Wilcoxon signed-rank test. The p-values are
Holm-corrected across the compared tasks. Every task also gets its minimum detectable difference
(:mod:`.power`). The comparison is refused (exit 2) when the two sides read data files with
different sha256: their scores are then not about the same samples.

With ``--gate --margin M`` the release gate (:mod:`.gate`) tests on every task whether B is worse
than A by more than M: exit 0 for GO, 1 for NO-GO.

With one sweep, A and B are two models of that sweep (`--a`/`--b` name them when it holds more
than two); with two sweeps, each side is the sweep's model (or the one `--a`/`--b` names). A model
is named by its shown name or its `model_id`; models are told apart by identity, so a name that
two models share (two files both called results.json) is refused as ambiguous. A run whose
metrics.json says `complete: false` is no result: it is not compared, and a note says so.

Both sweeps are checked (:func:`benchreg.core.analysis.check_sweep`) and the comparison is made
before anything is written: a folder that is no sweep, or a damaged file, is one located error.
"""

from benchreg.app.compare.cli import run
from benchreg.app.compare.comparison import compare
from benchreg.app.compare.page import as_dict, markdown, render_comparison, write_comparison
from benchreg.app.compare.pairing import compare_jobs
from benchreg.app.compare.render import headline, summary_line, table_rows
from benchreg.app.compare.results import ALPHA, Comparison, Gate, GateTask, TaskComparison
from benchreg.app.compare.sides import (
    check_same_data,
    describe,
    model_id,
    pick_sides,
    read_side,
    select_sides,
)
from benchreg.app.compare.stats import holm

__all__ = [
    "ALPHA",
    "Comparison",
    "Gate",
    "GateTask",
    "TaskComparison",
    "as_dict",
    "check_same_data",
    "compare",
    "compare_jobs",
    "describe",
    "headline",
    "holm",
    "markdown",
    "model_id",
    "pick_sides",
    "read_side",
    "render_comparison",
    "run",
    "select_sides",
    "summary_line",
    "table_rows",
    "write_comparison",
]
