"""Cross-view analysis of one system over a MolP2S sweep: does the model USE the property?

Rule (spec: "a use claim needs a shuffle drop and a donor-directed counterfactual flip, scoped to
one model and one property"), at significance level alpha (default 0.05):
1. shuffle drop: accuracy(correct) - accuracy(shuffled) > 0, paired on record_id, exact McNemar
   p < alpha;
2. donor-directed flip: on the counterfactual view, the rate of picking the donor completion
   exceeds chance (mean 1/#candidates; one-sided exact binomial p < alpha) and, when the
   structure-only run is in the sweep, exceeds the rate at which the structure-only choice for the
   same scaffold lands on the donor (paired, exact McNemar p < alpha).
A use claim is supported only when 1 and 2 both hold.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from benchreg.core import registry
from benchreg.core.analysis import (
    AnalysisReport,
    JobRecord,
    markdown_table,
    paired_binary,
    rate_with_ci,
)
from benchreg.core.stats import binomial_greater, wilson_ci

VIEW_ORDER = ("correct", "shuffled", "counterfactual", "structure_only")
RULE = (
    "Use claim supported iff (1) shuffle drop > 0 with exact McNemar p < {alpha} (paired on "
    "record_id) AND (2) counterfactual donor-hit rate > chance (one-sided exact binomial at the "
    "mean 1/#candidates, p < {alpha}) AND, when structure_only was run, donor-hit rate > the rate "
    "at which the structure-only choice lands on the donor (paired exact McNemar, p < {alpha})."
)
HEADER = [
    "property",
    "correct",
    "shuffled",
    "counterfactual (donor hits)",
    "structure only",
    "shuffle drop (McNemar p)",
    "donor vs chance (p)",
    "donor vs structure-only (p)",
    "use claim",
]


def _hits(job: JobRecord) -> dict[str, bool]:
    return {row["id"]: row.get("score") == 1.0 for row in job.samples}


def _view_stats(job: JobRecord) -> dict[str, Any]:
    hits = list(_hits(job).values())
    k, n = sum(hits), len(hits)
    return {"accuracy": k / n if n else 0.0, "hits": k, "n": n, "ci95": list(wilson_ci(k, n))}


def _shuffle_drop(correct: JobRecord, shuffled: JobRecord) -> dict[str, Any]:
    paired = paired_binary(_hits(correct), _hits(shuffled))
    return {
        "drop": paired.difference,
        "n_pairs": paired.n_pairs,
        "lost": paired.only_a,
        "gained": paired.only_b,
        "p_mcnemar": paired.p_mcnemar,
    }


def _donor(cf: JobRecord, structure_only: JobRecord | None) -> dict[str, Any]:
    rows = cf.samples
    n = len(rows)
    k = sum(1 for r in rows if r.get("score") == 1.0)
    chance = sum(1 / r.get("meta", {}).get("n_candidates", 1) for r in rows) / n if n else 0.0
    out: dict[str, Any] = {
        "donor_hits": k,
        "n": n,
        "donor_hit_rate": k / n if n else 0.0,
        "ci95": list(wilson_ci(k, n)),
        "chance": chance,
        "p_vs_chance": binomial_greater(k, n, chance),
    }
    if structure_only is not None:
        so_choice = {
            r.get("meta", {}).get("scaffold"): r.get("answer")
            for r in structure_only.samples
            if r.get("status") == "ok"
        }
        paired_rows = [r for r in rows if r.get("meta", {}).get("scaffold") in so_choice]
        cf_hit = {r["id"]: r.get("score") == 1.0 for r in paired_rows}
        so_hit = {r["id"]: so_choice[r["meta"]["scaffold"]] == r["gold"] for r in paired_rows}
        paired = paired_binary(cf_hit, so_hit)
        m = paired.n_pairs
        out["structure_only"] = {
            "n_pairs": m,
            "structure_only_donor_rate": paired.hits_b / m if m else 0.0,
            "donor_hit_rate_paired": paired.hits_a / m if m else 0.0,
            "p_mcnemar": paired.p_mcnemar,
        }
    return out


def _claim(views: dict[str, JobRecord], alpha: float) -> dict[str, Any]:
    result: dict[str, Any] = {"views": {v: _view_stats(j) for v, j in views.items()}}
    if "correct" in views and "shuffled" in views:
        result["shuffle_drop"] = _shuffle_drop(views["correct"], views["shuffled"])
    if "counterfactual" in views:
        result["donor"] = _donor(views["counterfactual"], views.get("structure_only"))
    drop, donor = result.get("shuffle_drop"), result.get("donor")
    if drop is None or donor is None:
        result["use_claim"] = "not assessable (needs correct, shuffled and counterfactual runs)"
        return result
    ok_drop = drop["drop"] > 0 and drop["p_mcnemar"] < alpha
    ok_chance = donor["donor_hit_rate"] > donor["chance"] and donor["p_vs_chance"] < alpha
    so = donor.get("structure_only")
    ok_so = so is None or (
        so["donor_hit_rate_paired"] > so["structure_only_donor_rate"] and so["p_mcnemar"] < alpha
    )
    supported = ok_drop and ok_chance and ok_so
    reasons = [
        name
        for name, ok in (
            ("no shuffle drop", ok_drop),
            ("donor rate not above chance", ok_chance),
            ("donor rate not above structure-only", ok_so),
        )
        if not ok
    ]
    result["use_claim"] = "supported" if supported else "not supported: " + "; ".join(reasons)
    return result


def _fmt_view(stats: dict[str, Any] | None) -> str:
    return "-" if stats is None else rate_with_ci(stats["hits"], stats["n"])


@registry.analyses.register("molp2s_views")
def cross_view(jobs: Sequence[JobRecord], alpha: float = 0.05) -> AnalysisReport:
    grouped: dict[str, dict[str, dict[str, JobRecord]]] = defaultdict(lambda: defaultdict(dict))
    for job in jobs:
        grouped[job.model][job.task][job.view or "correct"] = job
    data: dict[str, Any] = {"alpha": alpha, "rule": RULE.format(alpha=alpha), "models": {}}
    lines = [f"Rule: {RULE.format(alpha=alpha)}", ""]
    for model, tasks in sorted(grouped.items()):
        per_task = {}
        table: list[list[Any]] = []
        for task, views in sorted(tasks.items()):
            claim = _claim(views, alpha)
            per_task[task] = claim
            stats = claim["views"]
            drop, donor = claim.get("shuffle_drop"), claim.get("donor")
            so = (donor or {}).get("structure_only")
            table.append(
                [
                    task.split("/")[-1],
                    *(_fmt_view(stats.get(v)) for v in VIEW_ORDER),
                    f"{drop['drop']:+.3f} (p={drop['p_mcnemar']:.3g})" if drop else "-",
                    f"{donor['donor_hit_rate']:.3f} vs {donor['chance']:.3f} "
                    f"(p={donor['p_vs_chance']:.3g})"
                    if donor
                    else "-",
                    f"{so['donor_hit_rate_paired']:.3f} vs "
                    f"{so['structure_only_donor_rate']:.3f} (p={so['p_mcnemar']:.3g})"
                    if so
                    else "-",
                    claim["use_claim"],
                ]
            )
        data["models"][model] = per_task
        lines += [f"### {model}", "", markdown_table(HEADER, table), ""]
    return AnalysisReport(name="molp2s_views", markdown="\n".join(lines), data=data)
