"""Consistency check of a V6 file (`mode=validate`; also run on load, as warnings).

Every question gets the checks of :mod:`consistency` (numbers against the spec's formula, shape,
reference rules seen from one question); with the default tolerances the loader has already run
them while building the samples (in every load process) and this validator reports those
findings. When the sibling file is in the same folder, `*_reference` and `*_reference_control`
questions are also checked to pair up.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.types import Dataset, LoadContext, Sample
from benchreg.core.validation import Finding, cached_findings
from benchreg.families.reaction_mc.conditions import condition_signature
from benchreg.families.reaction_mc.consistency import (
    DEFAULT_ABS_TOL,
    DEFAULT_REL_TOL,
    QuestionChecker,
)
from benchreg.families.reaction_mc.effective import QuestionScores
from benchreg.families.reaction_mc.loader import (
    LOADER_CHECKS,
    data_file_name,
    read_questions,
    resolve_data_file,
    to_sample,
)
from benchreg.families.reaction_mc.records import base_id


def pair_findings(
    references: Iterable[Sample], controls: Iterable[Sample], rel_tol: float = 1e-4
) -> list[Finding]:
    """A control for every reference question and back, with the same options and constants."""
    findings: list[Finding] = []
    refs = {base_id(s.id): s for s in references}
    ctrls = {base_id(s.id): s for s in controls}
    for key in sorted(set(refs) - set(ctrls)):
        findings.append(
            Finding(refs[key].id, "reference question without its _ref_control twin", "error")
        )
    for key in sorted(set(ctrls) - set(refs)):
        findings.append(
            Finding(
                ctrls[key].id,
                "control question without its _ref question "
                "(controls exist only when the reference does)",
                "error",
            )
        )
    for key in sorted(set(refs) & set(ctrls)):
        ref, ctrl = refs[key], ctrls[key]
        ref_opts = sorted(condition_signature(o) for o in ref.input["options"])
        ctrl_opts = sorted(condition_signature(o) for o in ctrl.input["options"])
        if ref_opts != ctrl_opts:
            findings.append(Finding(ctrl.id, f"options differ from those of {ref.id}", "error"))
        for part in ("constant_conditions", "fixed_conditions"):
            a = condition_signature(ref.input["input"].get(part) or {})
            b = condition_signature(ctrl.input["input"].get(part) or {})
            if a != b:
                findings.append(Finding(ctrl.id, f"{part} differ from those of {ref.id}", "error"))
        ref_scores = QuestionScores.from_json(ref.meta["formula"])
        ctrl_scores = QuestionScores.from_json(ctrl.meta["formula"])
        if not math.isclose(
            ref_scores.best_effective, ctrl_scores.best_effective, rel_tol=rel_tol, abs_tol=1e-9
        ):
            findings.append(
                Finding(
                    ctrl.id,
                    f"best effective {ctrl_scores.best_effective:.6g} "
                    f"differs from {ref.id} "
                    f"({ref_scores.best_effective:.6g})",
                    "error",
                )
            )
    return findings


def _sibling_types(dataset: Dataset) -> tuple[str, str] | None:
    """(this file's type, the sibling's type) for a reference or control file, else None."""
    qtype = str(dataset.info.get("question_type", ""))
    if not qtype.endswith(("_reference", "_reference_control")) or not dataset.files:
        return None
    ref_type = qtype.removesuffix("_control")
    return qtype, f"{ref_type}_control" if qtype == ref_type else ref_type


def _sibling_path(dataset: Dataset) -> Path | None:
    types = _sibling_types(dataset)
    if types is None:
        return None
    try:
        return resolve_data_file(Path(dataset.files[0]).parent / data_file_name(types[1]))
    except BenchregError:
        return None


def _sibling_findings(dataset: Dataset) -> list[Finding]:
    types = _sibling_types(dataset)
    if types is None:
        return []
    qtype, other_type = types
    path = _sibling_path(dataset)
    if path is None:
        folder = Path(dataset.files[0]).parent
        return [
            Finding(
                str(folder), f"no {other_type} file beside this one: pairs not checked", "warning"
            )
        ]
    try:
        others = [to_sample(q) for q in read_questions(path, other_type)]
    except BenchregError as exc:
        return [Finding(str(path), f"sibling file unreadable: {exc.message}", "warning")]
    if qtype.endswith("_reference"):
        return pair_findings(dataset.samples, others)
    return pair_findings(others, dataset.samples)


CONSISTENCY = "reaction_mc.consistency"  # the loading door's name of this validator's findings


@registry.validators.register("reaction_mc_consistency")
def check_consistency(
    dataset: Dataset,
    ctx: LoadContext | None = None,
    rel_tol: float = DEFAULT_REL_TOL,
    abs_tol: float = DEFAULT_ABS_TOL,
    check_pairs: bool = True,
) -> list[Finding]:
    """Findings for every disagreement; ``abs_tol`` is scaled by 100 for yields/effectives.

    The findings come through the loading door (core.load), keyed by the sha256 of the file (and
    of its reference/control sibling when pairs are checked) and by these params: a repeated run
    on unchanged files reports the same findings without recomputing them, and says so."""
    files, key = _cache_key(dataset, rel_tol, abs_tol, check_pairs)

    def find() -> list[Finding]:
        made = dataset.checked.get(LOADER_CHECKS)
        if made is not None and made["tolerances"] == [rel_tol, abs_tol]:
            findings = [Finding(*finding) for finding in made["findings"]]
        else:
            checker = QuestionChecker(rel_tol, abs_tol)
            for sample in dataset.samples:
                checker.question(sample)
            findings = checker.findings
        if check_pairs:
            findings += _sibling_findings(dataset)
        return findings

    return cached_findings(
        CONSISTENCY, files, key, find, cache=ctx.cache if ctx is not None else True
    )


def _cache_key(
    dataset: Dataset, rel_tol: float, abs_tol: float, check_pairs: bool
) -> tuple[list[Path], dict[str, Any]]:
    files = [Path(f) for f in dataset.files]
    sibling = _sibling_path(dataset) if check_pairs else None
    if sibling is not None:
        files.append(sibling)
    key = {
        "rel_tol": rel_tol,
        "abs_tol": abs_tol,
        "check_pairs": check_pairs,
        "question_type": dataset.info.get("question_type"),
        "questions": len(dataset.samples),
        "sibling": sibling is not None,
    }
    return files, key
