"""Rules of spec 004 sections 2-3 for set entries, and the `retrieval_sets` validator.

:func:`check_entries` returns the valid entries and one error :class:`Finding` (``file:line``,
``query_id: problem``) per violation: a record that is not an entry; an unknown split; a bad
``as_of``; an unanswerable entry with gold or an answer; an answerable one without gold; a gold
region of the wrong shape for the modality or naming a whole pdf/code/video file; a gold source
missing from the manifest, of another modality, or observed after ``as_of`` (it could never be
a valid hit); an ``origin.dataset``/``origin.revision`` pair absent from the manifest; a repeated
query id; an answer whose type does not match `answer_format` (int, float, list, str); a gold
source of another holder than the entry's `scope.holder` (a cross-holder leak in the gold
itself); gold whose annotation is not registered (annotations.py: `origin` and every gold
source's `annotation_source` must name a registered annotation covering that dataset and
revision). The loader drops such entries (the spec: the entry is void) and keeps the findings.
An entry whose annotation is registered as `synthetic` (written by this project) is valid but
marked: it is demonstration data, not a benchmark.

The validator (``mode=validate`` and every load) reports those findings, checks the sha256 of
every manifest file, and reports the unanswerable share per modality against the >= 15% target.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from benchreg.core import registry
from benchreg.core.reader import Record
from benchreg.core.types import Dataset, LoadContext
from benchreg.core.validation import Finding
from benchreg.families.retrieval.annotations import DEMONSTRATION, annotation_for, by_dataset
from benchreg.families.retrieval.manifest import Manifest, sha256_problems
from benchreg.families.retrieval.records import SPLITS, Entry
from benchreg.families.retrieval.regions import common_region, region_problem
from benchreg.families.retrieval.times import parse_time, time_problem

UNANSWERABLE_TARGET = 0.15


@dataclass(frozen=True, slots=True)
class Located:
    entry: Entry
    where: str  # file:line
    demonstration: bool = False  # gold from a synthetic annotation (written by this project)


ANSWER_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,), "int": (int,), "float": (int, float), "list": (list,),
}
REGISTER_HINT = "register it (docs/retrieval.md, 'Gold provenance')"


def _answer_problem(entry: Entry) -> str | None:
    if entry.answer is None or entry.answer_format == "none":
        return None if entry.answer is None else "answer_format none needs answer null"
    types = ANSWER_TYPES[entry.answer_format]
    if isinstance(entry.answer, bool) or not isinstance(entry.answer, types):
        return (f"answer {entry.answer!r} is not of answer_format {entry.answer_format} "
                "(type the answer by its format)")
    return None


def annotation_problems(
    entry: Entry,
    manifest: Manifest,
    memo: dict[Any, tuple[str | None, bool]] | None = None,
) -> tuple[list[str], bool]:
    """(problems, synthetic): the entry's gold provenance against the annotation registry.

    ``memo`` (one per pass over a set's entries) keeps each origin's and each gold source's
    verdict: they depend on the origin or the source only, and 100,000 entries share a few."""
    memo = {} if memo is None else memo
    problems, synthetic = [], False
    key = (entry.origin.dataset, entry.origin.revision)
    if key not in memo:
        origin = by_dataset(*key)
        memo[key] = (
            None
            if origin
            else f"origin {key[0]!r} @ {key[1]!r} has no registered annotation: its gold is "
            f"not known third-party annotation ({REGISTER_HINT})",
            any(a.kind == "synthetic" for a in origin),
        )
    problem, synthetic = memo[key]
    if problem is not None:
        problems.append(problem)
    for i, gold in enumerate(entry.gold):
        source = gold.source_id
        if source not in memo:
            memo[source] = _source_annotation(source, manifest)
        problem, kind = memo[source]
        if problem is not None:
            problems.append(f"gold[{i}]: {problem}")
        synthetic |= kind
    return problems, synthetic


def _source_annotation(source: str, manifest: Manifest) -> tuple[str | None, bool]:
    """(problem, synthetic) of one gold source's annotation (no problem for an unknown source:
    :func:`entry_problems` names it)."""
    row = manifest.rows.get(source)
    if row is None:
        return None, False
    annotation = annotation_for(row.annotation_source)
    if annotation is None:
        return (
            f"annotation_source {row.annotation_source!r} of source {source!r} is not a "
            f"registered annotation ({REGISTER_HINT})",
            False,
        )
    if not annotation.covers(row.dataset, row.revision):
        return (
            f"annotation {annotation.name!r} does not cover {row.dataset!r} @ "
            f"{row.revision!r} (source {source!r})",
            False,
        )
    return None, annotation.kind == "synthetic"


def _record_id(data: Any) -> str:
    if isinstance(data, Mapping) and isinstance(data.get("query_id"), str):
        return data["query_id"]
    return "?"


def entry_problems(entry: Entry, manifest: Manifest) -> list[str]:
    problems = []
    if entry.split not in SPLITS:
        problems.append(f"unknown split {entry.split!r} (use {' or '.join(SPLITS)})")
    as_of = None
    if entry.as_of is not None:
        if problem := time_problem(entry.as_of):
            problems.append(f"as_of: {problem}")
        else:
            as_of = parse_time(entry.as_of)
    if entry.unanswerable:
        if entry.gold:
            problems.append("an unanswerable entry must have empty gold")
        if entry.answer is not None:
            problems.append("an unanswerable entry must have answer null")
    elif not entry.gold:
        problems.append("an answerable entry needs at least one gold region")
    if problem := _answer_problem(entry):
        problems.append(problem)
    holder = entry.scope.holder
    for i, gold in enumerate(entry.gold):
        row = manifest.rows.get(gold.source_id)
        if row is None:
            problems.append(f"gold[{i}]: source {gold.source_id!r} is not in the manifest")
        elif row.modality != entry.modality:
            problems.append(
                f"gold[{i}]: source {gold.source_id!r} is {row.modality}, not {entry.modality}"
            )
        elif as_of is not None and row.observed_at and parse_time(row.observed_at) > as_of:
            problems.append(
                f"gold[{i}]: source {gold.source_id!r} was observed at {row.observed_at}, "
                f"after as_of {entry.as_of}: it could never be a valid hit"
            )
        elif holder is not None and row.holder is not None and row.holder != holder:
            problems.append(
                f"gold[{i}]: source {gold.source_id!r} belongs to holder {row.holder!r}, not "
                f"the entry's {holder!r}: gold from another holder's memory is void"
            )
        # a common shape (regions.py) is a valid gold region: no closer look needed
        common = common_region(entry.modality, gold.region)
        if not common and (problem := region_problem(entry.modality, gold.region, gold=True)):
            problems.append(f"gold[{i}]: {problem}")
    if (entry.origin.dataset, entry.origin.revision) not in manifest.revisions():
        problems.append(
            f"origin {entry.origin.dataset!r} @ {entry.origin.revision!r} is not in the corpus "
            "manifest (the entry is void)"
        )
    return problems


def validated(data: Any) -> Entry | str:
    """The entry ``data`` as the model reads it, or the model's first error as
    ``field: message``."""
    try:
        return Entry.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "entry"
        return f"{field}: {error['msg']}"


def check_entries(
    records: Iterable[Record], manifest: Manifest
) -> tuple[list[Located], list[Finding]]:
    valid: list[Located] = []
    findings: list[Finding] = []
    first_seen: dict[str, str] = {}
    memo: dict[Any, tuple[str | None, bool]] = {}
    for record in records:
        entry = validated(record.data)
        if isinstance(entry, str):
            findings.append(Finding(record.where, f"{_record_id(record.data)}: {entry}", "error"))
            continue
        qid = entry.query_id  # (the record's query_id: the model takes strings as they are)
        if qid in first_seen:
            findings.append(
                Finding(
                    record.where,
                    f"{qid}: duplicate query_id (first at {first_seen[qid]})",
                    "error",
                )
            )
            continue
        first_seen[qid] = record.where
        problems = entry_problems(entry, manifest)
        provenance, synthetic = annotation_problems(entry, manifest, memo)
        problems += provenance
        findings += [Finding(record.where, f"{qid}: {p}", "error") for p in problems]
        if not problems:
            valid.append(Located(entry, record.where, synthetic))
    return valid, findings


def unanswerable_shares(entries: Iterable[Entry]) -> dict[str, tuple[int, int]]:
    """modality -> (unanswerable entries, entries)."""
    total: Counter[str] = Counter()
    unanswerable: Counter[str] = Counter()
    for entry in entries:
        total[entry.modality] += 1
        unanswerable[entry.modality] += entry.unanswerable
    return {m: (unanswerable[m], total[m]) for m in sorted(total)}


@registry.validators.register("retrieval_sets")
def validate_sets(
    dataset: Dataset, ctx: LoadContext, check_sha256: bool = True
) -> list[Finding]:
    findings = list(dataset.info.get("void", []))
    manifest: Manifest = dataset.info["manifest_obj"]
    demo = dataset.info.get("demonstration_entries", 0)
    if demo:
        findings.append(Finding(
            f"{ctx.task_name}", f"{DEMONSTRATION}: the gold of {demo} entr(y/ies) was written "
            "by this project (a synthetic annotation), so no gate verdict here is a result",
            "warning"))
    if check_sha256:
        findings += [Finding(w, p, "error") for w, p in sha256_problems(manifest)]
    for modality, (k, n) in dataset.info.get("unanswerable", {}).items():
        share = k / n if n else 0.0
        if share < UNANSWERABLE_TARGET:
            findings.append(
                Finding(
                    f"{ctx.task_name} ({modality})",
                    f"unanswerable share {k}/{n} = {share:.1%} is below the "
                    f"{UNANSWERABLE_TARGET:.0%} target of spec 004",
                    "warning",
                )
            )
    return findings
