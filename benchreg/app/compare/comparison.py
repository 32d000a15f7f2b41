"""`compare()`: read both sides, pair every common task and view, Holm-correct the two-sided
tests, gate when asked for, and note what was not compared. Nothing is written here."""

from __future__ import annotations

from pathlib import Path

from benchreg.app.compare.gate import check_options, release_gate
from benchreg.app.compare.pairing import compare_jobs
from benchreg.app.compare.results import ALPHA, Comparison
from benchreg.app.compare.sides import (
    Side,
    by_key,
    check_same_data,
    describe,
    pick_sides,
    read_side,
)
from benchreg.app.compare.stats import holm
from benchreg.core.analysis import JobRecord
from benchreg.core.errors import BenchregError

Key = tuple[str, str | None]


def compare(
    sweep_a: Path,
    sweep_b: Path | None = None,
    a: str | None = None,
    b: str | None = None,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = ALPHA,
    margin: float | None = None,
) -> Comparison:
    """Compare A with B; with ``margin`` also gate B against A (see :mod:`.gate`)."""
    check_options(margin is not None, margin, alpha)
    read_a = read_side(sweep_a)
    read_b = read_side(sweep_b) if sweep_b is not None else None
    side_a, side_b = pick_sides(read_a, read_b, a, b)
    keyed_a, keyed_b = by_key(side_a, "A"), by_key(side_b, "B")
    keys = sorted((k for k in keyed_a if k in keyed_b), key=lambda k: (k[0], k[1] or ""))
    label_a = f"{describe(side_a)} ({sweep_a})"
    label_b = f"{describe(side_b)} ({sweep_b or sweep_a})"
    if not keys:
        raise BenchregError(
            "the two sides have no task and view in common",
            where=f"{label_a} vs {label_b}",
            fix="compare sweeps that ran the same tasks and views",
        )
    for key in keys:
        check_same_data(keyed_a[key], keyed_b[key])
    result = Comparison(label_a, label_b, alpha=alpha, n_boot=n_boot)
    result.rows = [compare_jobs(keyed_a[k], keyed_b[k], n_boot, seed, alpha) for k in keys]
    tested = [r for r in result.rows if r.p is not None]
    for r, p in zip(tested, holm([r.p for r in tested if r.p is not None]), strict=True):
        r.p_holm = p
        r.significant = p < alpha
    if margin is not None:
        result.gate = release_gate(result.rows, margin, alpha)
    waiting = {
        "A": _incomplete(read_a, side_a),
        "B": _incomplete(read_b or read_a, side_b),
    }
    result.notes = _notes(result, keyed_a, keyed_b, waiting)
    return result


def _incomplete(read: Side, chosen: list[JobRecord]) -> list[JobRecord]:
    """The chosen model's jobs of this sweep that did not finish (not compared)."""
    groups = {j.group for j in chosen}
    return [j for j in read.incomplete if j.group in groups]


def _notes(
    result: Comparison,
    keyed_a: dict[Key, JobRecord],
    keyed_b: dict[Key, JobRecord],
    waiting: dict[str, list[JobRecord]],
) -> list[str]:
    notes = []
    for side, keyed, other, other_name in (
        ("A", keyed_a, keyed_b, "B"),
        ("B", keyed_b, keyed_a, "A"),
    ):
        unfinished = {(j.task, j.view) for j in waiting[other_name]}
        alone = [
            f"{t} [{v}]" if v else t
            for t, v in keyed
            if (t, v) not in other and (t, v) not in unfinished
        ]
        if alone:
            notes.append(f"only in {side} (not compared): {', '.join(alone)}")
    for name, jobs in waiting.items():
        if jobs:
            shown = ", ".join(f"{j.task} [{j.view}]" if j.view else j.task for j in jobs)
            notes.append(
                f"incomplete in {name} (failed requests not asked again; not compared): {shown}"
            )
    for row in result.rows:
        paired = [part for part in row.note.split("; ") if part.startswith("paired ")]
        notes += [f"{row.label}: {part}" for part in paired]
    return notes
