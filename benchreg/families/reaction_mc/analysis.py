"""Analysis `reaction_mc_reference_gain`: do reference conditions help a system?

For each system and each family (single_varying, all_varying), the jobs of
`reaction_mc/<family>_reference` and `reaction_mc/<family>_reference_control` are paired question
by question (same base id, i.e. the id without `_ref` / `_ref_control`). Reported per pair type:
mean relative score with and without references, the mean paired difference with a paired
bootstrap CI and a two-sided Wilcoxon signed-rank p (core.stats), and exact hits with an exact
McNemar p (core.analysis.paired_binary).

A system is its identity (`metrics.json` `model_id`), shown by its display name (with the short
identity when two systems share a name, and the data root when one ran on several); a predictions
file per question type ties into one system through a common `model.label` (see
core.analysis.JobRecord.group). Two jobs of one system, data root and question type are an error
that names both job folders.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from benchreg.core import registry
from benchreg.core.analysis import (
    AnalysisReport,
    JobRecord,
    group_identities,
    markdown_table,
    paired_binary,
    system_labels,
    unique_jobs,
)
from benchreg.core.stats import paired_bootstrap_ci, wilcoxon_signed_rank
from benchreg.families.reaction_mc.records import base_id

FAMILIES = ("single_varying", "all_varying")
NAME = "reaction_mc_reference_gain"


def _question_type(job: JobRecord) -> str | None:
    task = job.task
    if not task.startswith("reaction_mc/"):
        return None
    return task.split("/", 1)[1]


def _score(row: Mapping[str, Any], metric: str) -> float:
    scores = row.get("scores") or {}
    value = scores.get(metric)
    if value is None and metric == "avg_relative_score":
        value = row.get("score")
    return float(value or 0.0)


def _by_base(job: JobRecord) -> dict[str, Mapping[str, Any]]:
    return {base_id(str(row["id"])): row for row in job.samples}


def pair_stats(
    ref_job: JobRecord,
    ctrl_job: JobRecord,
    *,
    metric: str = "avg_relative_score",
    hit_metric: str = "exact_match_accuracy",
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Paired comparison of one reference job with its control job."""
    refs, ctrls = _by_base(ref_job), _by_base(ctrl_job)
    keys = sorted(set(refs) & set(ctrls))
    with_ref = [_score(refs[k], metric) for k in keys]
    without = [_score(ctrls[k], metric) for k in keys]
    diffs = [a - b for a, b in zip(with_ref, without, strict=True)]
    hits = paired_binary(
        {k: _score(refs[k], hit_metric) >= 1.0 for k in keys},
        {k: _score(ctrls[k], hit_metric) >= 1.0 for k in keys},
    )
    n = len(keys)
    ci = paired_bootstrap_ci(diffs, n_boot=n_boot, seed=seed) if n else (None, None)
    return {
        "pairs": n,
        "unpaired_reference": len(set(refs) - set(ctrls)),
        "unpaired_control": len(set(ctrls) - set(refs)),
        "mean_with_reference": sum(with_ref) / n if n else None,
        "mean_without_reference": sum(without) / n if n else None,
        "mean_difference": sum(diffs) / n if n else None,
        "ci95": list(ci),
        "wilcoxon_p": wilcoxon_signed_rank(diffs) if n else None,
        "hits_with_reference": hits.hits_a,
        "hits_without_reference": hits.hits_b,
        "hit_only_with_reference": hits.only_a,
        "hit_only_without_reference": hits.only_b,
        "mcnemar_p": hits.p_mcnemar,
        "reference_job": str(ref_job.dir),
        "control_job": str(ctrl_job.dir),
    }


@registry.analyses.register(NAME)
def reference_gain(
    jobs: Sequence[JobRecord],
    metric: str = "avg_relative_score",
    hit_metric: str = "exact_match_accuracy",
    n_boot: int = 2000,
    seed: int = 0,
) -> AnalysisReport:
    grouped: dict[str, dict[str, JobRecord]] = defaultdict(dict)
    notes: list[str] = []
    ours = [job for job in jobs if _question_type(job) is not None]
    labels = system_labels(ours)
    identities = group_identities(ours)
    system_ids: dict[str, Any] = {}
    for (group, root, _task, _view), job in unique_jobs(ours, NAME).items():
        key = labels[(group, root)]
        grouped[key][str(_question_type(job))] = job
        found = identities[group]
        system_ids[key] = found[0] if len(found) == 1 else found
    systems: dict[str, dict[str, Any]] = {}
    for key in sorted(grouped):
        by_type = grouped[key]
        for family in FAMILIES:
            ref, ctrl = by_type.get(f"{family}_reference"), by_type.get(
                f"{family}_reference_control"
            )
            if ref is None or ctrl is None:
                if ref is not None or ctrl is not None:
                    missing = "control" if ctrl is None else "reference"
                    notes.append(f"{key}: {family} has no {missing} job; not compared")
                continue
            systems.setdefault(key, {})[family] = pair_stats(
                ref, ctrl, metric=metric, hit_metric=hit_metric, n_boot=n_boot, seed=seed
            )
    data = {"metric": metric, "hit_metric": hit_metric, "n_boot": n_boot, "seed": seed,
            "systems": systems, "system_ids": system_ids, "notes": notes}
    return AnalysisReport(name=NAME, markdown=_markdown(data), data=data)


HEADER = ["system", "pair", "n", "with ref", "without", "Δ mean", "95% CI", "Wilcoxon p",
          "hits with", "hits without", "only with", "only without", "McNemar p"]


def _ci_text(ci: Sequence[float | None]) -> str | None:
    lo, hi = ci
    return None if lo is None or hi is None else f"[{lo:.4f}, {hi:.4f}]"


def _markdown(data: Mapping[str, Any]) -> str:
    lines = [
        "# Reference gain (reaction_mc)",
        "",
        f"Each `*_reference` question is paired with its `*_reference_control` twin (same base "
        f"id). Δ = {data['metric']} with references − without; 95% CI by paired bootstrap "
        f"({data['n_boot']} resamples, seed {data['seed']}); p by two-sided Wilcoxon "
        f"signed-rank. Exact hits ({data['hit_metric']}) compared with an exact McNemar test.",
        "",
    ]
    rows = [
        [system, family, s["pairs"], s["mean_with_reference"], s["mean_without_reference"],
         s["mean_difference"], _ci_text(s["ci95"]), s["wilcoxon_p"], s["hits_with_reference"],
         s["hits_without_reference"], s["hit_only_with_reference"],
         s["hit_only_without_reference"], s["mcnemar_p"]]
        for system, families in data["systems"].items()
        for family, s in families.items()
    ]
    lines.append(markdown_table(HEADER, rows) if rows else "(no reference/control job pairs found)")
    if data["systems"]:
        lines += ["", "Model identities:", ""]
        for system in data["systems"]:
            found = data["system_ids"].get(system)
            found = found if isinstance(found, list) else [found]
            lines.append(f"- {system}: " + ", ".join(f"`{i}`" for i in found))
    unpaired = [
        f"- {system} / {family}: {s['unpaired_reference']} reference and "
        f"{s['unpaired_control']} control questions without a partner"
        for system, families in data["systems"].items()
        for family, s in families.items()
        if s["unpaired_reference"] or s["unpaired_control"]
    ]
    if unpaired or data["notes"]:
        lines += ["", "## Notes", "", *unpaired, *[f"- {note}" for note in data["notes"]]]
    return "\n".join(lines) + "\n"
