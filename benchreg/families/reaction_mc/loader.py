"""Loader: one `multiple_choice_<question_type>.json` of a V6 output directory -> samples.

The file is a JSON list of questions; a JSON Lines file of the same name (`.jsonl`) is read when
the `.json` is absent (both read with :mod:`benchreg.core.reader`: a key given twice in one
object, or an id given to two questions, is an error). Every question is validated against
:mod:`records`; the first violation rejects the file with its location and the question id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from loguru import logger
from pydantic import TypeAdapter, ValidationError

from benchreg.core import checkcache, partload, registry
from benchreg.core.errors import BenchregError
from benchreg.core.io import confined, sha256_file
from benchreg.core.params import loader_params
from benchreg.core.reader import IdIndex, Record, gc_paused, iter_list_records, read_records
from benchreg.core.types import Dataset, LoadContext, Sample, samples_of_rows
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
    plain_question,
)


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


def read_questions(path: Path, question_type: str) -> list[QuestionFields]:
    """Parse and validate every question of one file (raises BenchregError on the first problem)."""
    return list(iter_questions(path, question_type))


def iter_questions(path: Path, question_type: str, *, batch: int = 512) -> Iterator[QuestionFields]:
    """:func:`read_questions` as a stream: a JSON list file is decoded a read buffer at a time
    (core.reader.iter_list_records) and checked in batches, so memory holds one buffer's raw
    questions, not the whole file decoded."""
    yield from checked_questions(question_records(path), question_type, batch=batch)


def question_records(path: Path) -> Iterable[Record]:
    """The records of a question file: a JSON list (streamed), or JSON Lines (`.jsonl`)."""
    return read_records(path) if path.suffix == ".jsonl" else iter_list_records(path)


def checked_questions(
    records: Iterable[Record], question_type: str, *, batch: int = 512
) -> Iterator[QuestionFields]:
    """The validated questions of ``records`` (an id given twice is an error)."""
    if question_type not in QUESTION_TYPES:
        raise BenchregError(
            f"unknown question_type {question_type!r}", fix=f"one of {', '.join(QUESTION_TYPES)}"
        )
    ids = IdIndex("id", what="question", keep=False)
    pending: list[tuple[str, Record]] = []
    for record in records:
        pending.append((ids.add(record), record))
        if len(pending) >= batch:
            yield from _checked(pending, question_type)
            pending = []
    yield from _checked(pending, question_type)


def _checked(records: list[tuple[str, Record]], question_type: str) -> list[QuestionFields]:
    plain = [plain_question(record.data) for _, record in records]
    rest = [position for position, question in enumerate(plain) if question is None]
    validated: list[QuestionFields] | None = []
    if rest:
        try:  # the rest in one pydantic call; on a violation, find the first one in order
            validated = _QUESTIONS.validate_python([records[i][1].data for i in rest])
        except ValidationError:
            validated = None
    by_position = dict(zip(rest, validated or (), strict=False))
    questions: list[QuestionFields] = []
    for position, (qid, record) in enumerate(records):
        label = f"{record.where} (question {qid})"
        question = plain[position] or by_position.get(position)
        if question is None:
            try:
                question = _QUESTION.validate_python(record.data)
            except ValidationError as exc:
                raise BenchregError(
                    _first_error(exc), where=label, fix="see spec section 7"
                ) from None
        problem = check_identity(question, question_type)
        if problem:
            raise BenchregError(problem, where=label)
        questions.append(question)
    return questions


_QUESTIONS: TypeAdapter[list[QuestionFields]] = TypeAdapter(list[Question])
_QUESTION: TypeAdapter[QuestionFields] = TypeAdapter(Question)


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


def to_sample(question: QuestionFields, strings: dict[Any, Any] | None = None) -> Sample:
    """Sample.meta (JSON, also written to samples.jsonl): `release` = the file's own numbers,
    `formula` = the effective/relative scores recomputed from `meta.scores`.

    Built from the validated question's own values (a fresh dict from validation), without
    copying them again. With ``strings`` (one dict for a whole file), equal condition texts,
    SMILES and keys of different questions become one object, and so do equal condition items
    (``{"content": ..., "SMILES": ...}``, the same texts in the same key order): a release
    repeats its tables' reactants, products and conditions in question after question. Nothing
    changes a sample's data once built, so equal items can be one object (the marshal entries
    of the loaded-data cache then write each once per chunk, too)."""
    share = _Sharer(strings if strings is not None else {})
    meta = question["meta"]
    release = {key: meta.get(key) for key in RELEASE_META_KEYS}
    for key in ("doi", "parent_table_id"):
        release[key] = share.text(release[key])
    if type(release["scores"]) is list:
        release["scores"] = share.outcomes(release["scores"])
    options = question["options"]
    for option in options:
        share.conditions(option)
    inp: dict[str, Any] = {k: v for k, v in question["input"].items() if v is not None}
    share.conditions(inp["constant_conditions"])
    share.conditions(inp.get("fixed_conditions"))
    share.items(inp["reactants"])
    share.items(inp["products"])
    if "reference_conditions" in inp:
        inp["reference_conditions"] = [r.model_dump() for r in inp["reference_conditions"]]
    return Sample(
        id=question["id"],
        input={
            "question_type": question["question_type"],
            "target_key": share.text(question["target_key"]),
            "varying_keys": [share.text(key) for key in question["varying_keys"]],
            "input": inp,
            "options": options,
        },
        gold=question["answer"],
        meta={"release": release, "formula": formula_scores(release, len(options)).as_json()},
    )


_PLAIN = frozenset({float, int, str, bool, type(None)})


class _Sharer:
    __slots__ = ("text_of",)

    def __init__(self, strings: dict[Any, Any]) -> None:
        self.text_of = strings.setdefault  # texts by themselves, items by ("item", texts)

    def text(self, value: Any) -> Any:
        return self.text_of(value, value) if type(value) is str else value

    def conditions(self, group: dict[str, Any] | None) -> None:
        """In place: a condition group {key: [{"content": ..., "SMILES": ...}, ...]}."""
        for items in (group or {}).values():
            if type(items) is list:
                self.items(items)

    def items(self, items: list[Any]) -> None:
        """In place: a list of items (a condition's, the reactants or products)."""
        for position, item in enumerate(items):
            if type(item) is dict:
                items[position] = self.molecule(item)

    def outcomes(self, scores: list[Any]) -> list[Any]:
        """``meta.scores``, each entry of plain values (numbers, texts, null) the first equal
        entry of the file: the same keys in the same order, values of the same types (1 and
        1.0 and True stay apart, and so do 0.0 and -0.0)."""
        out = []
        for entry in scores:
            if type(entry) is dict:
                key: list[Any] = ["scores"]
                for name, value in entry.items():
                    kind = type(value)
                    if kind not in _PLAIN or (kind is float and not value and str(value)[0] == "-"):
                        break  # -0.0 (== 0.0) is kept apart
                    key += (name, kind, value)
                else:
                    entry = self.text_of(tuple(key), entry)
            out.append(entry)
        return out

    def molecule(self, item: dict[str, Any]) -> dict[str, Any]:
        """The item with its `content` and `SMILES` texts shared (in place); an item of just
        these two texts, in this order, is the first equal item of the file."""
        text_of = self.text_of
        if len(item) == 2:
            content, smiles = item.get("content"), item.get("SMILES")
            if type(content) is str and type(smiles) is str and next(iter(item)) == "content":
                key = ("item", content, smiles)
                first = text_of(key, item)
                if first is item:  # the first of its kind: its texts shared with the rest
                    item["content"] = text_of(content, content)
                    item["SMILES"] = text_of(smiles, smiles)
                return first  # type: ignore[no-any-return]
        content = item.get("content")
        if type(content) is str:
            item["content"] = content = text_of(content, content)
        smiles = item.get("SMILES")
        if type(smiles) is str:
            item["SMILES"] = text_of(smiles, smiles)
        return item


@registry.loaders.register("reaction_mc_questions")
@loader_params(question_type=str)
def load_questions(ctx: LoadContext) -> Dataset:
    question_type = str(ctx.params.get("question_type", ""))
    if len(ctx.data) != 1:
        raise BenchregError(
            f"task {ctx.task_name} must name exactly one data file", fix="set `data: [<file>]`"
        )
    path = confined(resolve_data_file(ctx.data[0]), ctx.data_root)
    key = {"question_type": question_type, "checked_with": list(TOLERANCES)}
    with gc_paused():  # no collector passes over the growing heap while loading
        rows = checkcache.loaded(LOADED, [path], key)
        info: dict[str, Any] = {"question_type": question_type, "checks": "cached"}
        if rows is not None:
            logger.info(
                f"{path.name}: questions (and their checks) reused from an earlier run on this "
                f"exact file (sha256 {sha256_file(path)[:12]}, cache {checkcache.cache_dir()})"
            )
        else:
            rows, read_by = _built_rows(path, question_type, key)
            info.update(checks="run", read_by=read_by)
        samples = samples_of_rows(row[:4] for row in rows)
        findings = [finding for row in rows for finding in row[4]]
    return Dataset(
        samples=samples,
        files=[path],
        info={**info, "questions": len(samples)},
        checked={LOADER_CHECKS: {"tolerances": list(TOLERANCES), "findings": findings}},
    )


LOADED = "reaction_mc.samples"  # the loaded-data cache's name of this loader's samples
LOADER_CHECKS = "reaction_mc_consistency"  # Dataset.checked: the findings made while loading
TOLERANCES = (DEFAULT_REL_TOL, DEFAULT_ABS_TOL)


def question_rows(records: Iterable[Record], question_type: str) -> list[SampleRow]:
    """The samples of validated questions as rows ``(id, input, gold, meta, findings)``, the
    findings being those of the consistency checks at the default tolerances (as tuples): what
    the loaded-data cache keeps, and what core.partload's workers build from their parts."""
    strings: dict[Any, Any] = {}
    checker = QuestionChecker(*TOLERANCES)
    found = checker.findings
    rows: list[SampleRow] = []
    for question in checked_questions(records, question_type):
        sample = to_sample(question, strings)
        before = len(found)
        checker.question(sample)
        new = found[before:]  # most questions have none
        findings = tuple((f.where, f.message, f.severity) for f in new) if new else ()
        rows.append((sample.id, sample.input, sample.gold, sample.meta, findings))
    return rows


def _built_rows(
    path: Path, question_type: str, key: dict[str, Any]
) -> tuple[list[SampleRow], dict[str, Any]]:
    """The rows of a file not in the cache (several processes for a large JSON list, see
    core.partload), stored in the cache for the next run; and how many processes read it."""
    with partload.loaded_in_parts(
        path,
        f"{__name__}:question_rows",
        [question_type],
        strings_shared=True,
        rows_files=checkcache.enabled(),
    ) as parts:
        if parts is not None and len({row[0] for row in parts.rows}) == len(parts.rows):
            checkcache.store_loaded(LOADED, [path], [], key, then=parts.rows_files)
            logger.info(
                f"{path.name}: {len(parts.rows):,} questions read by "
                f"{len(parts.worker_peak_rss_mib) + 1} processes (workers' peak RSS "
                f"{', '.join(f'{m:.0f}' for m in parts.worker_peak_rss_mib)} MiB)"
            )
            workers = [round(m, 1) for m in parts.worker_peak_rss_mib]
            return parts.rows, {"processes": len(workers) + 1, "worker_peak_rss_mib": workers}
    # one process; also how a problem anywhere (an id given twice included) is reported
    rows = question_rows(question_records(path), question_type)
    checkcache.store_loaded(LOADED, [path], rows, key, strings_shared=True)
    return rows, {"processes": 1}


SampleRow = tuple[str, Any, Any, Any, tuple[tuple[str, str, str], ...]]


def dump_questions(questions: list[dict[str, Any]]) -> str:
    """The V6 file text for a list of question dicts (used by the builder and tools)."""
    return json.dumps(questions, ensure_ascii=False, indent=2) + "\n"
