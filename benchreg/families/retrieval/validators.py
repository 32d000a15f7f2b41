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
revision); an entry of a modality that has corpus files in the root, none of them of the
entry's own dataset (`no corpus for its source`: CodeSearchNet beside the SWE-bench checkouts).
The loader drops such entries (the spec: the entry is void) and keeps the findings;
:func:`void_reason` names each void entry's reason for the loader's stop line.
An entry whose annotation is registered as `synthetic` (written by this project) is valid but
marked: it is demonstration data, not a benchmark.

The validator (``mode=validate`` and every load) reports those findings, checks the sha256 of
every manifest file, and reports the unanswerable share per modality against the >= 15% target.
"""

from __future__ import annotations

import re
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
NO_CORPUS = "no corpus for its source"


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


def corpus_problem(entry: Entry, manifest: Manifest) -> str | None:
    """The entry's modality has a corpus in this root, but not for the entry's own dataset
    (CodeSearchNet queries in a root that holds the SWE-bench checkouts): any system would rank
    another dataset's sources, so the entry is void. A modality with no corpus at all is not
    this case (a predictions file can still be scored; the baseline stops on its own)."""
    with_corpus = manifest.with_corpus()
    if (entry.modality, entry.origin.dataset) in with_corpus:
        return None
    others = sorted(d for m, d in with_corpus if m == entry.modality)
    if not others:
        return None
    return (
        f"{NO_CORPUS}: no {entry.modality} source of {entry.origin.dataset!r} has a corpus "
        f"file in this root, only {', '.join(map(repr, others))}'s: it would be ranked against "
        "another dataset's sources"
    )


# why an entry is void, by the first of its findings: (text in the finding, reason), in order
VOID_REASONS: tuple[tuple[str, str], ...] = (
    (NO_CORPUS, NO_CORPUS),
    ("registered annotation", "annotation not registered"),
    ("does not cover", "annotation not registered"),
    ("duplicate query_id", "duplicate query_id"),
    ("is not in the manifest", "gold source not in the manifest"),
    ("not in the corpus manifest", "origin not in the manifest"),
    ("belongs to holder", "gold of another holder"),
    ("after as_of", "gold observed after as_of"),
    ("as_of:", "bad as_of"),
    ("unknown split", "unknown split"),
    ("unanswerable entry must", "unanswerable with gold or answer"),
    ("answerable entry needs", "answerable without gold"),
    ("is not of answer_format", "answer not of its format"),
)
OTHER_MODALITY = re.compile(r"gold\[\d+\]: source .* is \w+, not \w+$")


def void_reason(finding: Finding) -> str:
    """The short reason of a void entry's finding (``malformed entry`` when no rule names it)."""
    message = finding.message
    found = next((reason for text, reason in VOID_REASONS if text in message), None)
    if found is not None:
        return found
    if OTHER_MODALITY.search(message):
        return "gold source of another modality"
    return "bad gold region" if "gold[" in message else "malformed entry"


def void_by_entry(void: Iterable[Finding]) -> dict[str, str]:
    """``file:line`` -> reason of every void entry (its first finding), in file order."""
    out: dict[str, str] = {}
    for finding in void:
        out.setdefault(finding.where, void_reason(finding))
    return out


def void_line(by_entry: Mapping[str, str], entries: int) -> str:
    """`N of M entries are void (by reason: r1 n1, r2 n2); first: file:line (reason)`."""
    counts = Counter(by_entry.values())
    reasons = ", ".join(f"{reason} {n}" for reason, n in counts.most_common())
    where, reason = next(iter(by_entry.items()))
    return (
        f"{len(by_entry)} of {entries} entries are void (by reason: {reasons}); "
        f"first: {where} ({reason})"
    )


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
        if problem := corpus_problem(entry, manifest):
            problems.append(problem)
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
