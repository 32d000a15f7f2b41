"""Cross-view analysis of a MolP2S sweep (`molp2s_views`): does a model USE the property?

Spec 003: "A use claim needs a shuffle drop and a donor-directed counterfactual flip, scoped to one
model and one property." Per model (its identity, never its display name alone) and directory, at
significance level ``alpha`` (default 0.05), both tests one-sided exact McNemar, paired:

(a) shuffle drop: hit on correct vs hit on shuffled, paired on record_id; passes when the model
    loses more records than it gains (correct hit, shuffled miss > the reverse) with p < alpha.
(b) donor-directed flip: on each counterfactual record, "lands on the donor" (the record's label)
    for the counterfactual answer vs for the model's own answer to the same masked graph and
    candidates without the property: its structure_only answer. Passes when more records move
    onto the donor than off it with p < alpha. There is no substitute baseline: the correct-view
    answer follows the correct property, which points away from the donor, so against it a model
    that answers every counterfactual record by structure alone (a system that never flips) shows
    "moves onto the donor" that are its structural choices. Without a structure_only run the flip
    is not run: the verdict is "not testable: needs the structure_only view", never "supported".

Claims only with their evidence: "supported" needs (a) and (b) to be run and to pass. A test
whose views are absent is not run ("not testable: needs the X view"); a test that was run and
failed makes the verdict "not supported". A bundled directory (prompt family property_bundle:
electronic, magnetic_resonance, vibrational; all_properties) holds several properties at once,
while the spec scopes a use claim to one property: its verdict is about the bundle as a whole, not
any one of its properties, and never uses the words of a one-property use claim ("supported",
"use claim"): "bundle: both tests pass", "bundle: a test fails", "bundle: not testable". The
counterfactual donor-hit rate against chance is printed for context only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchreg.core import registry
from benchreg.core.analysis import (
    AnalysisReport,
    JobRecord,
    group_identities,
    markdown_table,
    model_heading,
    paired_binary,
    rate_with_ci,
    system_labels,
    unique_jobs,
)
from benchreg.core.stats import binomial_greater, wilson_ci

NAME = "molp2s_views"
VIEW_ORDER = ("correct", "shuffled", "counterfactual", "structure_only")
# Bundled directories of spec 003 (prompt family property_bundle or all_properties).
BUNDLES: dict[str, tuple[str, ...]] = {
    "electronic": ("dipole", "gap", "ultraviolet_visible"),
    "magnetic_resonance": ("proton_nmr_integration", "carbon_nmr_degeneracy"),
    "vibrational": ("infrared", "raman"),
    "all_properties": (
        "dipole",
        "gap",
        "infrared",
        "raman",
        "ultraviolet_visible",
        "proton_nmr_integration",
        "carbon_nmr_degeneracy",
    ),
}
BUNDLE_TEMPLATES = ("property_bundle", "all_properties")
SPEC_PASSAGE = (
    "A use claim needs a shuffle drop and a donor-directed counterfactual flip, scoped to one "
    "model and one property."
)
RULE = (
    "Use claim supported iff (a) shuffle drop: correct vs shuffled, paired on record_id, more "
    "records lost than gained, one-sided exact McNemar p < {alpha}; AND (b) donor-directed flip: "
    "on counterfactual records, more answers move onto the donor than off it relative to the "
    "model's own structure_only answer for the same record (the property omitted), one-sided "
    "exact McNemar p < {alpha}. A test without its views is not run: without the structure_only "
    "run the verdict is 'not testable: needs the structure_only view' (no other baseline stands "
    "in for it), never 'supported'. A bundle (property_bundle, all_properties: several "
    "properties at once) gets a verdict about the bundle as a whole, not about any one of its "
    "properties, worded 'bundle: both tests pass' / 'bundle: a test fails' / 'bundle: not "
    "testable', never as a use claim (the spec scopes one to one model and one property). "
    "Donor rate vs chance is context, not part of the rule."
)
BASELINE_VIEW = "structure_only"  # the flip's only baseline: the same record without the property
HEADER = [
    "directory",
    "scope",
    *VIEW_ORDER,
    "(a) shuffle drop",
    "(b) donor-directed flip",
    "donor vs chance (context)",
    "verdict (use claim: one property; bundle: the bundle as a whole)",
]


def _hits(job: JobRecord) -> dict[str, bool]:
    return {str(row["id"]): row.get("score") == 1.0 for row in job.samples}


def _view_stats(job: JobRecord) -> dict[str, Any]:
    hits = list(_hits(job).values())
    k, n = sum(hits), len(hits)
    return {
        "accuracy": k / n if n else 0.0,
        "hits": k,
        "n": n,
        "ci95": list(wilson_ci(k, n)),
        "job": job.dir.name,
        "model_id": job.model_id,
    }


def scope_of(task: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A single property, or a bundle (told by the entry's prompt family or directory name)."""
    directory = task.split("/")[-1]
    data = [str(d) for d in spec.get("data") or []]
    if data:
        directory = data[0].rstrip("/").split("/")[-1]
    templates = (spec.get("prompt") or {}).get("templates") or {}
    bundled = directory in BUNDLES or any(
        str(name).startswith(BUNDLE_TEMPLATES) for name in templates.values()
    )
    if not bundled:
        return {"kind": "property", "directory": directory, "properties": [directory]}
    properties = list(BUNDLES.get(directory, ()))
    return {"kind": "bundle", "directory": directory, "properties": properties}


# --- (a) shuffle drop ---------------------------------------------------------------------------


def shuffle_drop(correct: JobRecord, shuffled: JobRecord, alpha: float) -> dict[str, Any]:
    paired = paired_binary(_hits(correct), _hits(shuffled))
    lost, gained = paired.only_a, paired.only_b
    passed = paired.n_pairs > 0 and lost > gained and paired.p_a_greater < alpha
    return {
        "test": "one-sided exact McNemar, correct vs shuffled hits paired on record_id",
        "n_pairs": paired.n_pairs,
        "correct_hits": paired.hits_a,
        "shuffled_hits": paired.hits_b,
        "drop": paired.difference,
        "lost": lost,
        "gained": gained,
        "p_one_sided": paired.p_a_greater,
        "p_two_sided": paired.p_mcnemar,
        "passed": passed,
    }


# --- (b) donor-directed flip --------------------------------------------------------------------

_SEPARATORS = "-_.:#/|"


def _base_row(cf_id: str, by_id: Mapping[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The baseline row whose id is the longest prefix of ``cf_id`` that ends at a separator
    (`mp2s-0001` for `mp2s-0001-cf2`)."""
    for i in range(len(cf_id) - 1, 0, -1):
        if cf_id[i] in _SEPARATORS and cf_id[:i] in by_id:
            return by_id[cf_id[:i]]
    return None


def _scaffold(row: Mapping[str, Any]) -> str | None:
    value = (row.get("meta") or {}).get("scaffold")
    return str(value) if value is not None else None


def _choice(row: Mapping[str, Any]) -> Any:
    """The answer the model gave, or None when it gave no valid one (missing, invalid, out of
    range: such an answer is on no candidate, as in scoring)."""
    return row.get("answer") if row.get("status") == "ok" else None


def pair_counterfactual(
    cf: JobRecord, baseline: JobRecord
) -> tuple[dict[str, tuple[dict[str, Any], dict[str, Any]]], dict[str, int]]:
    """Each counterfactual row with the baseline row of the same masked graph and candidates:
    by record id (the counterfactual id extends its source record's id), else by scaffold (the
    masked SMILES + candidate list) when the baseline answered every record of that scaffold
    alike. Returns the pairs and the counts of rows left unpaired, by reason."""
    by_id = {str(r["id"]): r for r in baseline.samples}
    by_scaffold: dict[str, list[dict[str, Any]]] = {}
    for row in baseline.samples:
        if (scaffold := _scaffold(row)) is not None:
            by_scaffold.setdefault(scaffold, []).append(row)
    pairs: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    unpaired = {"no_baseline_record": 0, "different_candidates": 0, "ambiguous_scaffold": 0}
    for row in cf.samples:
        scaffold = _scaffold(row)
        base = _base_row(str(row["id"]), by_id)
        if base is None and scaffold in by_scaffold:
            rows = by_scaffold[scaffold]
            if len({repr(_choice(r)) for r in rows}) > 1:
                unpaired["ambiguous_scaffold"] += 1
                continue
            base = rows[0]
        if base is None:
            unpaired["no_baseline_record"] += 1
            continue
        if scaffold is not None and _scaffold(base) not in (None, scaffold):
            unpaired["different_candidates"] += 1
            continue
        pairs[str(row["id"])] = (row, base)
    return pairs, unpaired


def donor_flip(
    cf: JobRecord, baseline: JobRecord, alpha: float, baseline_view: str = BASELINE_VIEW
) -> dict[str, Any]:
    """Test (b) of the counterfactual answers against ``baseline``'s answers (the model's
    structure_only run: the rule uses no other)."""
    pairs, unpaired = pair_counterfactual(cf, baseline)
    on_donor_cf = {k: cf_row.get("score") == 1.0 for k, (cf_row, _) in pairs.items()}
    on_donor_base = {
        k: _choice(base) is not None and _choice(base) == cf_row.get("gold")
        for k, (cf_row, base) in pairs.items()
    }
    paired = paired_binary(on_donor_cf, on_donor_base)
    to_donor, from_donor = paired.only_a, paired.only_b
    passed = paired.n_pairs > 0 and to_donor > from_donor and paired.p_a_greater < alpha
    n = paired.n_pairs
    return {
        "test": "one-sided exact McNemar, counterfactual answer on the donor vs the "
        f"{baseline_view} answer on the donor, paired per counterfactual record",
        "baseline": baseline_view,
        "n_counterfactual": len(cf.samples),
        "n_pairs": n,
        "unpaired": {k: v for k, v in unpaired.items() if v},
        "donor_rate_counterfactual": paired.hits_a / n if n else 0.0,
        "donor_rate_baseline": paired.hits_b / n if n else 0.0,
        "to_donor": to_donor,
        "from_donor": from_donor,
        "unchanged": n - to_donor - from_donor,
        "p_one_sided": paired.p_a_greater,
        "p_two_sided": paired.p_mcnemar,
        "passed": passed,
    }


def donor_vs_chance(cf: JobRecord) -> dict[str, Any]:
    rows = cf.samples
    n = len(rows)
    k = sum(1 for r in rows if r.get("score") == 1.0)
    chance = sum(1 / (r.get("meta") or {}).get("n_candidates", 1) for r in rows) / n if n else 0.0
    return {
        "donor_hits": k,
        "n": n,
        "donor_hit_rate": k / n if n else 0.0,
        "ci95": list(wilson_ci(k, n)),
        "chance": chance,
        "p_vs_chance": binomial_greater(k, n, chance),
        "part_of_rule": False,
    }


# --- the claim ----------------------------------------------------------------------------------


PROPERTY_VERDICTS = {"pass": "supported", "fail": "not supported", "untestable": "not testable"}
# A bundle's verdicts: about the bundle as a whole, never in the words of a use claim.
BUNDLE_VERDICTS = {
    "pass": "bundle: both tests pass",
    "fail": "bundle: a test fails",
    "untestable": "bundle: not testable",
}


def _ordered(views: Sequence[str]) -> list[str]:
    return [v for v in VIEW_ORDER if v in views]


def _needs(views: Sequence[str]) -> str:
    """`needs the structure_only view`, `needs the shuffled and counterfactual views`, ..."""
    if len(views) == 1:
        return f"needs the {views[0]} view"
    return f"needs the {', '.join(views[:-1])} and {views[-1]} views"


def use_claim(
    views: Mapping[str, JobRecord], scope: Mapping[str, Any], alpha: float = 0.05
) -> dict[str, Any]:
    """The verdict for one model and one directory, with both tests and their n and p.

    ``verdict`` is "supported" / "not supported" / "not testable" for a single property and
    "bundle: both tests pass" / "bundle: a test fails" / "bundle: not testable" for a bundle;
    ``text`` says why (``use_claim`` holds it too, for a single property only).
    """
    tests, missing = _tests(views, alpha)
    result: dict[str, Any] = {
        "scope": dict(scope),
        "views": {v: _view_stats(views[v]) for v in VIEW_ORDER if v in views},
        "alpha": alpha,
        "tests": tests,
    }
    if "counterfactual" in views:
        result["donor_vs_chance"] = donor_vs_chance(views["counterfactual"])
    outcome, reason = _outcome(tests["shuffle_drop"], tests["donor_flip"], missing)
    if scope["kind"] == "bundle":
        verdict = BUNDLE_VERDICTS[outcome]
        inner = ", ".join(scope["properties"]) or "several properties"
        text = (
            f"bundle {scope['directory']} ({inner}) as a whole: {reason}; this is about the "
            "bundle, not about any one of its properties"
        )
    else:
        verdict = PROPERTY_VERDICTS[outcome]
        text = {"pass": verdict, "fail": f"{verdict}: {reason}", "untestable": reason}[outcome]
        result["use_claim"] = text
    result["verdict"] = verdict
    result["text"] = text
    return result


def _tests(views: Mapping[str, JobRecord], alpha: float) -> tuple[dict[str, Any], list[str]]:
    """Both tests, each run when its views are there; the views missing for either."""
    tests: dict[str, Any] = {}
    missing: list[str] = []
    if "correct" in views and "shuffled" in views:
        tests["shuffle_drop"] = shuffle_drop(views["correct"], views["shuffled"], alpha)
    else:
        need = [v for v in ("correct", "shuffled") if v not in views]
        tests["shuffle_drop"] = {"passed": None, "missing_views": need}
        missing += need
    if "counterfactual" in views and BASELINE_VIEW in views:
        tests["donor_flip"] = donor_flip(views["counterfactual"], views[BASELINE_VIEW], alpha)
    else:
        need = [v for v in ("counterfactual", BASELINE_VIEW) if v not in views]
        tests["donor_flip"] = {"passed": None, "missing_views": need}
        missing += [v for v in need if v not in missing]
    return tests, missing


def _outcome(
    drop: Mapping[str, Any], flip: Mapping[str, Any], missing: list[str]
) -> tuple[str, str]:
    """ "pass", "fail" or "untestable", and why."""
    failed = [
        text
        for test, text in (
            (drop, f"no significant shuffle drop (p={drop.get('p_one_sided', 1.0):.3g})"),
            (flip, f"no significant donor-directed flip (p={flip.get('p_one_sided', 1.0):.3g})"),
        )
        if test["passed"] is False
    ]
    untested = [
        f"{name} not testable: {_needs(_ordered(test['missing_views']))}"
        for name, test in (("shuffle drop", drop), ("donor-directed flip", flip))
        if test["passed"] is None
    ]
    if failed:
        return "fail", "; ".join(failed + untested)
    if missing:
        return "untestable", f"not testable: {_needs(_ordered(missing))}"
    return "pass", "shuffle drop and donor-directed flip both pass"


def _scope_cell(scope: Mapping[str, Any]) -> str:
    if scope["kind"] == "property":
        return "property"
    inner = ", ".join(scope["properties"]) if scope["properties"] else "several properties"
    return f"bundle ({inner})"


def _drop_cell(drop: Mapping[str, Any]) -> str:
    if drop["passed"] is None:
        return f"not run (missing {', '.join(drop['missing_views'])})"
    mark = "pass" if drop["passed"] else "fail"
    return (
        f"{drop['drop']:+.3f}: lost {drop['lost']}, gained {drop['gained']} of "
        f"n={drop['n_pairs']} pairs; p={drop['p_one_sided']:.3g} → {mark}"
    )


def _flip_cell(flip: Mapping[str, Any]) -> str:
    if flip["passed"] is None:
        return f"not run (missing {', '.join(flip['missing_views'])})"
    mark = "pass" if flip["passed"] else "fail"
    return (
        f"vs {flip['baseline']}: to donor {flip['to_donor']}, from donor "
        f"{flip['from_donor']} of n={flip['n_pairs']} pairs "
        f"({flip['donor_rate_counterfactual']:.3f} vs {flip['donor_rate_baseline']:.3f}); "
        f"p={flip['p_one_sided']:.3g} → {mark}"
    )


def _chance_cell(chance: Mapping[str, Any] | None) -> str:
    if chance is None:
        return "-"
    return (
        f"{chance['donor_hit_rate']:.3f} vs {chance['chance']:.3f} "
        f"(n={chance['n']}, p={chance['p_vs_chance']:.3g})"
    )


def _view_cell(stats: Mapping[str, Any] | None) -> str:
    return "-" if stats is None else rate_with_ci(stats["hits"], stats["n"])


@registry.analyses.register(NAME)
def cross_view(jobs: Sequence[JobRecord], alpha: float = 0.05) -> AnalysisReport:
    ours = list(jobs)  # the jobs whose task entries name this analysis
    indexed = unique_jobs(ours, NAME, key=lambda j: (*j.system_key, j.task, j.view or "correct"))
    labels = system_labels(ours)
    identities = group_identities(ours)
    grouped: dict[str, dict[str, dict[str, JobRecord]]] = {}
    specs: dict[str, Mapping[str, Any]] = {}
    ids: dict[str, list[str]] = {}
    for (group, root, task, view), job in indexed.items():
        grouped.setdefault(labels[(group, root)], {}).setdefault(task, {})[view] = job
        specs.setdefault(task, job.task_spec)
        ids[labels[(group, root)]] = identities[group]
    rule = RULE.format(alpha=alpha)
    data: dict[str, Any] = {
        "alpha": alpha,
        "sided": "one-sided",
        "rule": rule,
        "spec": SPEC_PASSAGE,
        "models": {},
        "model_ids": {},
    }
    lines = [f'Spec 003: "{SPEC_PASSAGE}"', "", f"Rule: {rule}", ""]
    for label in sorted(grouped):
        per_task: dict[str, Any] = {}
        table: list[list[Any]] = []
        for task, views in sorted(grouped[label].items()):
            claim = use_claim(views, scope_of(task, specs.get(task, {})), alpha)
            per_task[task] = claim
            tests = claim["tests"]
            table.append(
                [
                    task.split("/")[-1],
                    _scope_cell(claim["scope"]),
                    *(_view_cell(claim["views"].get(v)) for v in VIEW_ORDER),
                    _drop_cell(tests["shuffle_drop"]),
                    _flip_cell(tests["donor_flip"]),
                    _chance_cell(claim.get("donor_vs_chance")),
                    f"**{claim['text']}** (rule: (a) and (b), one-sided, α={alpha})",
                ]
            )
        data["models"][label] = per_task
        data["model_ids"][label] = ids[label][0] if len(ids[label]) == 1 else ids[label]
        lines += [model_heading(label, ids[label]), "", markdown_table(HEADER, table), ""]
    return AnalysisReport(name=NAME, markdown="\n".join(lines), data=data)
