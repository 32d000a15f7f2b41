"""Loader: one `multiple_choice_<question_type>.json` of a V6 output directory -> samples.

The file is a JSON list of questions; a JSON Lines file of the same name (`.jsonl`) is read when
the `.json` is absent (both read with :mod:`benchreg.core.reader`: a key given twice in one
object, or an id given to two questions, is an error). Every question is validated by the
pydantic types of :mod:`records`, the one place its rules are written; the first violation
rejects the file with its location and the question id. The samples come through the loading
door (:mod:`benchreg.core.load`), which keeps them for the next run on the same file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.io import confined
from benchreg.core.load import LoadPlan, gc_paused, load
from benchreg.core.params import loader_params
from benchreg.core.reader import IdIndex, Record, iter_list_records, read_records
from benchreg.core.types import Dataset, LoadContext, Sample
from benchreg.families.reaction_mc.consistency import (
    DEFAULT_ABS_TOL,
    DEFAULT_REL_TOL,
    QuestionChecker,
)
from benchreg.families.reaction_mc.effective import formula_scores
from benchreg.families.reaction_mc.records import (
    QUESTION_TYPES,
    Question,
    QuestionFields,
    check_identity,
)

LOADED = "reaction_mc.samples"  # the loading door's name of this loader's rows
ROWS_FORMAT = 2  # the shape of a row below; a new shape must not read back an old entry
LOADER_CHECKS = "reaction_mc_consistency"  # Dataset.checked: the findings made while loading
TOLERANCES = (DEFAULT_REL_TOL, DEFAULT_ABS_TOL)
BATCH = 512  # questions validated by one pydantic call (their raw values dropped after it)

# (id, input, gold, meta, findings): a sample and its consistency findings at TOLERANCES
SampleRow = tuple[str, Any, Any, Any, tuple[tuple[str, str, str], ...]]


def data_file_name(question_type: str) -> str:
    return f"multiple_choice_{question_type}.json"


def resolve_data_file(path: Path) -> Path:
    """The `.json` file, or its `.jsonl` sibling; a clear error when neither exists."""
    if path.is_file():
        return path
    sibling = path.with_suffix(".jsonl")
    if sibling.is_file():
        return sibling
    raise BenchregError(
        "question file not found",
        where=path,
        fix="set roots.reaction_mc=<V6 output folder holding multiple_choice_<type>.json>",
    )


@registry.loaders.register("reaction_mc_questions")
@loader_params(question_type=str)
def load_questions(ctx: LoadContext) -> Dataset:
    question_type = str(ctx.params.get("question_type", ""))
    if len(ctx.data) != 1:
        raise BenchregError(
            f"task {ctx.task_name} must name exactly one data file", fix="set `data: [<file>]`"
        )
    path = confined(resolve_data_file(ctx.data[0]), ctx.data_root)
    _known(question_type)
    plan = LoadPlan(
        name=LOADED,
        files=(path,),
        read=lambda: read_rows(path, question_type),
        key={"question_type": question_type, "tolerances": list(TOLERANCES), "rows": ROWS_FORMAT},
    )
    loaded = load(plan, cache=ctx.cache)
    rows: list[SampleRow] = loaded.value
    with gc_paused():
        samples = [Sample(sample_id, inp, gold, meta) for sample_id, inp, gold, meta, _ in rows]
    findings = [finding for row in rows for finding in row[4]]
    return Dataset(
        samples=samples,
        files=[path],
        info={
            "question_type": question_type,
            "questions": len(samples),
            "loaded": loaded.source,
            "checks": "run" if loaded.source == "read" else "cached",
        },
        checked={LOADER_CHECKS: {"tolerances": list(TOLERANCES), "findings": findings}},
    )


def read_rows(path: Path, question_type: str) -> list[SampleRow]:
    """Every question of the file, validated, as a row ``(id, input, gold, meta, findings)``:
    the findings are those of the consistency checks at the default tolerances (as tuples), which
    the validator then reports without checking the questions again."""
    checker = QuestionChecker(*TOLERANCES)
    found = checker.findings
    rows: list[SampleRow] = []
    for question in iter_questions(path, question_type):
        sample = to_sample(question)
        before = len(found)
        checker.question(sample)
        findings = tuple((f.where, f.message, f.severity) for f in found[before:])
        rows.append((sample.id, sample.input, sample.gold, sample.meta, findings))
    return rows


def read_questions(path: Path, question_type: str) -> list[QuestionFields]:
    """Parse and validate every question of one file (raises BenchregError on the first problem)."""
    return list(iter_questions(path, question_type))


def iter_questions(path: Path, question_type: str) -> Iterator[QuestionFields]:
    """:func:`read_questions` one batch at a time: the raw questions of a batch are dropped once
    validated, so the file's decoded values and the validated questions are not all held at
    once. An id given twice is an error naming both places."""
    _known(question_type)
    ids = IdIndex("id", what="question", keep=False)
    pending: list[tuple[str, Record]] = []
    for record in question_records(path):
        pending.append((ids.add(record), record))
        if len(pending) >= BATCH:
            checked, pending = _checked(pending, question_type), []
            yield from checked
    yield from _checked(pending, question_type)


def question_records(path: Path) -> Iterable[Record]:
    """The records of a question file: a JSON list, or JSON Lines (`.jsonl`)."""
    return read_records(path) if path.suffix == ".jsonl" else iter_list_records(path)


def _known(question_type: str) -> None:
    if question_type not in QUESTION_TYPES:
        raise BenchregError(
            f"unknown question_type {question_type!r}", fix=f"one of {', '.join(QUESTION_TYPES)}"
        )


_QUESTIONS: TypeAdapter[list[QuestionFields]] = TypeAdapter(list[Question])
_QUESTION: TypeAdapter[QuestionFields] = TypeAdapter(Question)


def _checked(batch: list[tuple[str, Record]], question_type: str) -> list[QuestionFields]:
    """The validated questions of ``batch`` in one pydantic call; when one is rejected, each is
    validated again in order, so the first problem (of pydantic's or of the identity checks)
    is the one reported."""
    try:
        questions: list[QuestionFields] | None = _QUESTIONS.validate_python(
            [record.data for _, record in batch]
        )
    except ValidationError:
        questions = None
    out: list[QuestionFields] = []
    for position, (qid, record) in enumerate(batch):
        if questions is not None:
            question = questions[position]
        else:
            try:
                question = _QUESTION.validate_python(record.data)
            except ValidationError as exc:
                raise BenchregError(
                    _first_error(exc), where=_label(record, qid), fix="see spec section 7"
                ) from None
        problem = check_identity(question, question_type)
        if problem:
            raise BenchregError(problem, where=_label(record, qid))
        out.append(question)
    return out


def _label(record: Record, qid: str) -> str:
    return f"{record.where} (question {qid})"


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    loc = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{loc}: {message}" if loc else message


RELEASE_META_KEYS = (
    "yields",
    "effective_scores",
    "scores",
    "option_relative_scores",
    "best_yield",
    "best_effective_score",
    "global_best_yield",
    "global_best_effective_score",
    "doi",
    "parent_table_id",
)


def to_sample(question: QuestionFields) -> Sample:
    """Sample.meta (JSON, also written to samples.jsonl): `release` = the file's own numbers,
    `formula` = the effective/relative scores recomputed from `meta.scores`.

    Built from the validated question's own values (a fresh dict from validation), without
    copying them again."""
    meta = question["meta"]
    release = {key: meta.get(key) for key in RELEASE_META_KEYS}
    options = question["options"]
    inp: dict[str, Any] = {k: v for k, v in question["input"].items() if v is not None}
    if "reference_conditions" in inp:
        inp["reference_conditions"] = [r.model_dump() for r in inp["reference_conditions"]]
    return Sample(
        id=question["id"],
        input={
            "question_type": question["question_type"],
            "target_key": question["target_key"],
            "varying_keys": question["varying_keys"],
            "input": inp,
            "options": options,
        },
        gold=question["answer"],
        meta={"release": release, "formula": formula_scores(release, len(options)).as_json()},
    )


def dump_questions(questions: list[dict[str, Any]]) -> str:
    """The V6 file text for a list of question dicts (used by the builder and tools)."""
    return json.dumps(questions, ensure_ascii=False, indent=2) + "\n"
