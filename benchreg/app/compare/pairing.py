"""One task's paired comparison: pair the per-sample scores of A and B on sample id, then the
means with their CIs, the difference with its paired bootstrap CI, the two-sided test (exact
McNemar for 0/1 scores, else Wilcoxon signed-rank) and the minimum detectable difference."""

from __future__ import annotations

import statistics

from benchreg.app.compare.power import mde_paired_binary, mde_paired_t
from benchreg.app.compare.results import TaskComparison
from benchreg.core.analysis import JobRecord


def _scores(job: JobRecord) -> dict[str, float | None]:
    return {str(row["id"]): row.get("score") for row in job.samples}


def coverage_note(n_common: int, n_a: int, n_b: int) -> str:
    """What was paired when the sides did not run the same samples (e.g. one ran run.limit)."""
    if n_common == n_a == n_b:
        return ""
    paired = f"paired {n_common} of A's {n_a} samples and {n_common} of B's {n_b}"
    if n_common == n_b:
        return f"{paired}: B ran a subset ({n_a - n_common} samples of A not compared)"
    if n_common == n_a:
        return f"{paired}: A ran a subset ({n_b - n_common} samples of B not compared)"
    return f"{paired}: the sides ran different samples"


def compare_jobs(
    job_a: JobRecord, job_b: JobRecord, n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> TaskComparison:
    scores_a, scores_b = _scores(job_a), _scores(job_b)
    common = [i for i in scores_a if i in scores_b]
    row = TaskComparison(
        task=job_a.task,
        view=job_a.view,
        metric=str(job_a.metrics.get("primary")),
        n_pairs=len(common),
        only_a=len(scores_a) - len(common),
        only_b=len(scores_b) - len(common),
    )
    if not common:
        row.note = "no sample id in common"
        return row
    row.add_note(coverage_note(len(common), len(scores_a), len(scores_b)))
    pairs = [(scores_a[i], scores_b[i]) for i in common]
    # a sample outside the metric's denominator (e.g. an unanswerable query for recall) has no
    # score on either side: it is not a pair
    scored = [(float(a), float(b)) for a, b in pairs if a is not None and b is not None]
    if not scored:
        row.add_note(f"{row.metric} has no per-sample scores (not a mean of sample scores)")
        return row
    _fill_statistics(row, scored, n_boot, seed, alpha)
    return row


def _fill_statistics(
    row: TaskComparison, pairs: list[tuple[float, float]], n_boot: int, seed: int, alpha: float
) -> None:
    from benchreg.core.stats import bootstrap_mean_ci, paired_bootstrap_ci, wilson_ci

    xa, xb = [a for a, _ in pairs], [b for _, b in pairs]
    diffs = [a - b for a, b in pairs]
    row.n_pairs = len(pairs)
    row.mean_a, row.mean_b = sum(xa) / len(xa), sum(xb) / len(xb)
    row.difference = sum(diffs) / len(diffs)
    row.sd_difference = statistics.stdev(diffs) if len(diffs) > 1 else None
    row.ci95 = paired_bootstrap_ci(diffs, n_boot=n_boot, seed=seed)
    binary = all(v in (0.0, 1.0) for v in (*xa, *xb))
    for name, xs in (("ci95_a", xa), ("ci95_b", xb)):
        ci = (
            wilson_ci(int(sum(xs)), len(xs))
            if binary
            else bootstrap_mean_ci(xs, n_boot=n_boot, seed=seed)
        )
        setattr(row, name, (float(ci[0]), float(ci[1])))
    if binary:
        _binary_test(row, pairs, alpha)
    else:
        _continuous_test(row, diffs, alpha)


def _binary_test(row: TaskComparison, pairs: list[tuple[float, float]], alpha: float) -> None:
    from benchreg.core.stats import mcnemar_exact

    only_a = sum(1 for a, b in pairs if a > b)
    only_b = sum(1 for a, b in pairs if b > a)
    row.test, row.p = "McNemar (exact)", mcnemar_exact(only_a, only_b)
    row.discordant = (only_a, only_b)
    detectable = mde_paired_binary(row.n_pairs, only_a + only_b, alpha)
    row.mde = detectable.mde
    if detectable.reason:
        row.add_note(f"MDE: {detectable.reason}")


def _continuous_test(row: TaskComparison, diffs: list[float], alpha: float) -> None:
    from benchreg.core.stats import wilcoxon_signed_rank

    row.test, row.p = "Wilcoxon signed-rank", wilcoxon_signed_rank(diffs)
    detectable = mde_paired_t(row.n_pairs, row.sd_difference or 0.0, alpha)
    row.mde = detectable.mde
    if detectable.reason:
        row.add_note(f"MDE: {detectable.reason}")
