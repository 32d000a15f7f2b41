"""Answer schemas of the 16 tasks, as the results.json format document gives them.

Two levels, on purpose:
- `check` rejects (status invalid, scored as wrong: it never earns credit) what the official
  evaluator cannot score at all and would abort on: a list task whose answer is not a list of
  objects, a label or reply that is not a string, a report that is neither a section object (with
  string sections) nor a report string, and a report string with no section heading (text that
  holds no report). Everything the official evaluator scores, we score the same way; a genuinely
  empty answer of the right type (`[]`, `""`, `{}`, an empty report string) is `ok` and scores as
  the official evaluator scores it (`""` as the first label).
- The pydantic item models state the documented shape exactly; items that deviate (a missing or
  extra key, a number where a string belongs) are still scored as the official evaluator scores
  them (they match nothing), and the counter reports them as `off_schema_items`.

A label that is not one of the task's official labels (evaluate.py's list) is scored as given (the
official evaluator adds it as a class) and marked `out_of_range`; no label is mapped by a fuzzy
match. A report string whose sections share one line is split at its headings and flagged
`degraded` (`Checked.degraded`).
"""

from __future__ import annotations

import json
import random
from functools import cache, lru_cache
from typing import Annotated, Any, Literal, NamedTuple, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from benchreg.core import registry
from benchreg.core.types import Checked, Sample, Status
from benchreg.families.cblue.catalogue import NOT_LISTED, REPORT_SECTIONS, TaskInfo, lookup
from benchreg.families.cblue.formats import REPORT_LEAD_IN
from benchreg.families.cblue.parser import read_report

NonEmptyStr = Annotated[str, Field(min_length=1)]


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Entity(_Item):
    """CMeEE-V2, IMCS-V2-NER: a mention and its entity type (one of the prompt's types)."""

    entity: str
    type: str


class Triple(_Item):
    """CMeIE: a relation between a head (subject) and a tail (object) mention."""

    predicate: str
    subject: str
    object: str


class Event(_Item):
    """CHIP-CDEE: a clinical finding event."""

    subject_word: str = Field(alias="主体词")
    status: str = Field(alias="发生状态")
    descriptors: list[NonEmptyStr] = Field(alias="描述词")
    anatomy: list[NonEmptyStr] = Field(alias="解剖部位")


class Normalization(_Item):
    """CHIP-CDN: a chosen ICD-10 standard term."""

    entity: str
    type: Literal["normalization"]


class EntityAttr(_Item):
    """CHIP-MDCFNPC, IMCS-V2-SR: a finding and its attribute label (one of the prompt's)."""

    entity: str
    attr: str


class Report(BaseModel):
    """IMCS-V2-MRG: report sections (the reference gold's shape); absent sections are empty."""

    model_config = ConfigDict(extra="forbid", strict=True)

    chief_complaint: str = Field("", alias="主诉")
    present_illness: str = Field("", alias="现病史")
    examinations: str = Field("", alias="辅助检查")
    past_history: str = Field("", alias="既往史")
    diagnosis: str = Field("", alias="诊断")
    advice: str = Field("", alias="建议")


ITEM_MODELS: dict[str, type[_Item]] = {
    "CMeEE-V2": Entity,
    "IMCS-V2-NER": Entity,
    "CMeIE": Triple,
    "CHIP-CDEE": Event,
    "CHIP-CDN": Normalization,
    "CHIP-MDCFNPC": EntityAttr,
    "IMCS-V2-SR": EntityAttr,
}


@cache
def _item_adapter(task: str) -> TypeAdapter[Any]:
    return TypeAdapter(ITEM_MODELS[task])


@cache
def _list_adapter(task: str) -> TypeAdapter[Any]:
    return TypeAdapter(list[ITEM_MODELS[task]])  # type: ignore[name-defined]


class _PlainShape(NamedTuple):
    """An item model's shape as plain dict checks: the keys (aliases), the keys holding lists of
    non-empty strings, the keys with one allowed value; every other key holds a string."""

    keys: frozenset[str]
    string_lists: frozenset[str]
    fixed: tuple[tuple[str, str], ...]


def _plain_shape(model: type[_Item]) -> _PlainShape:
    keys, string_lists, fixed = set(), set(), []
    for name, field in model.model_fields.items():
        key = field.alias or name
        keys.add(key)
        if get_origin(field.annotation) is list and get_args(field.annotation)[0] in (
            str,
            NonEmptyStr,
        ):  # a list of non-empty strings passes either
            string_lists.add(key)
        elif get_origin(field.annotation) is Literal:
            (value,) = get_args(field.annotation)
            fixed.append((key, value))
        elif field.annotation is not str:
            raise TypeError(f"{model.__name__}.{name}: no plain check for {field.annotation}")
    return _PlainShape(frozenset(keys), frozenset(string_lists), tuple(fixed))


_PLAIN_SHAPES = {task: _plain_shape(model) for task, model in ITEM_MODELS.items()}


def _plainly_valid(shape: _PlainShape, item: Any) -> bool:
    """True only for an item the item model accepts (a plain dict of exact str / list values in
    the documented keys); False says nothing (pydantic then decides)."""
    if type(item) is not dict or item.keys() != shape.keys:
        return False
    for key, value in item.items():
        if key in shape.string_lists:
            if type(value) is not list or not all(type(v) is str and v for v in value):
                return False
        elif type(value) is not str:
            return False
    return all(item[key] == value for key, value in shape.fixed)


def off_schema_items(task: str, answer: Any) -> int:
    """How many items of a list answer deviate from the documented item shape: 0 at once when
    every item is plainly in the shape (the common case, several times faster than pydantic),
    else the whole list in one validation (items are validated one by one, independently, and
    every failing item has its errors located at its index)."""
    if task not in ITEM_MODELS or not isinstance(answer, list):
        return 0
    shape = _PLAIN_SHAPES[task]
    if all(_plainly_valid(shape, item) for item in answer):
        return 0
    try:
        _list_adapter(task).validate_python(answer)
    except ValidationError as exc:
        bad = {error["loc"][0] if error["loc"] else None for error in exc.errors()}
        if all(type(index) is int for index in bad):
            return len(bad)
    else:
        return 0
    adapter = _item_adapter(task)  # an error about the list itself: count item by item
    bad_items = 0
    for item in answer:
        try:
            adapter.validate_python(item)
        except ValidationError:
            bad_items += 1
    return bad_items


def _json_data(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # the item-by-item check tells which
        return False
    return True


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


# --- schemas (registered by answer shape) ------------------------------------------------------


# --- the answers as JSON Schemas (`model.structured=json_schema`) -----------------------------
#
# The JSON a model writes under a schema IS the structured answer (the results.json format the
# item models above state), so these schemas set `json_is_answer`: the decoded JSON goes to
# `check` as a predictions file's answer does, and the text parsers (which read the prompt's
# `<type>实体：...` lines, not JSON) are not asked. The field an item takes from the sample's
# answer choices (an entity type, a predicate, a chosen term, an attribute) is an enum of them.

CHOICE_FIELD = {
    "cblue_entities": "type",
    "cblue_triples": "predicate",
    "cblue_normalizations": "entity",
    "cblue_entity_attrs": "attr",
}
LIST_ITEMS = {
    "cblue_entities": Entity,
    "cblue_triples": Triple,
    "cblue_events": Event,
    "cblue_normalizations": Normalization,
    "cblue_entity_attrs": EntityAttr,
}


@cache
def _item_schema(name: str) -> dict[str, Any]:
    schema = LIST_ITEMS[name].model_json_schema(by_alias=True)
    schema.pop("title", None)
    schema.pop("description", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def _sample_choices(sample: Sample) -> list[str]:
    choices = sample.input.get("answer_choices")
    return [str(c) for c in choices] if isinstance(choices, list) else []


class ListAnswer:
    """A list of item objects (all extraction tasks)."""

    json_is_answer = True

    def __init__(self, name: str) -> None:
        self.name = name

    def json_schema(self, sample: Sample) -> dict[str, Any] | None:
        """An array of the task's item objects; the field the sample's answer choices name (an
        entity type, a predicate, ...) one of them."""
        if self.name not in LIST_ITEMS:
            return None
        item = json.loads(json.dumps(_item_schema(self.name)))
        field_name = CHOICE_FIELD.get(self.name)
        choices = _sample_choices(sample)
        if field_name is not None and choices:
            item["properties"][field_name] = {"type": "string", "enum": choices}
        return {"type": "array", "items": item}

    def check(self, answer: Any, sample: Sample) -> Checked:
        if not isinstance(answer, list):
            return Checked(
                answer, Status.INVALID, f"answer must be a list, got {_type_name(answer)}"
            )
        if all(isinstance(item, dict) for item in answer) and _json_data(answer):
            return Checked(answer)  # each item is an object of JSON data (one dumps, not n)
        for index, item in enumerate(answer):
            if not isinstance(item, dict):
                return Checked(
                    answer,
                    Status.INVALID,
                    f"item {index} must be an object, got {_type_name(item)}",
                )
            try:
                json.dumps(item, ensure_ascii=False)
            except (TypeError, ValueError) as exc:
                return Checked(answer, Status.INVALID, f"item {index} is not JSON data: {exc}")
        return Checked(answer)

    def random(self, sample: Sample, rng: random.Random) -> list[dict[str, Any]]:
        """CHIP-CDN: a random subset of the options; other tasks: the empty list."""
        if self.name == "cblue_normalizations":
            choices = list(sample.input.get("answer_choices") or [])
            picked = [c for c in choices if rng.random() < 0.5]
            return [{"entity": c, "type": "normalization"} for c in picked]
        return []


class LabelAnswer:
    """A label string (the 7 classification tasks); `""` counts as the task's first label (the
    official rule for the empty structured answer; empty model *text* never gets here: the
    parsers make it invalid)."""

    name = "cblue_label"
    json_is_answer = True

    def json_schema(self, sample: Sample) -> dict[str, Any] | None:
        """One of the labels: the sample's answer choices that are official labels, in the
        prompt's order (plus 非上述类型 where the task has it), else every official label."""
        labels = _official_labels(sample)
        if not labels:
            return None
        enum = [c for c in _sample_choices(sample) if c in labels]
        if NOT_LISTED in labels and NOT_LISTED not in enum:
            enum.append(NOT_LISTED)
        return {"type": "string", "enum": enum if enum else sorted(labels)}

    def check(self, answer: Any, sample: Sample) -> Checked:
        if not isinstance(answer, str):
            return Checked(
                answer, Status.INVALID, f"label must be a string, got {_type_name(answer)}"
            )
        if answer and answer not in _official_labels(sample):
            return Checked(answer, Status.OUT_OF_RANGE, f"{answer!r} is not a label of the task")
        return Checked(answer)

    def random(self, sample: Sample, rng: random.Random) -> str:
        """One of the sample's options that is an official label (or any official label)."""
        labels = _official_labels(sample)
        choices = sample.input.get("answer_choices") or []
        candidates = sorted({c for c in choices if c in labels} | ({NOT_LISTED} & labels))
        return rng.choice(candidates or sorted(labels))


def _official_labels(sample: Sample) -> frozenset[str]:
    return _labels_of_task(str(sample.input.get("task_dataset", "")))


@lru_cache(maxsize=64)
def _labels_of_task(name: str) -> frozenset[str]:
    info: TaskInfo | None = lookup(name)
    return frozenset(info.labels) if info else frozenset()


class ReplyAnswer:
    """MedDG: the doctor's next reply."""

    name = "cblue_reply"
    json_is_answer = True

    def json_schema(self, sample: Sample) -> dict[str, Any] | None:
        return {"type": "string"}

    def check(self, answer: Any, sample: Sample) -> Checked:
        if not isinstance(answer, str):
            return Checked(
                answer, Status.INVALID, f"reply must be a string, got {_type_name(answer)}"
            )
        return Checked(answer)

    def random(self, sample: Sample, rng: random.Random) -> str:
        return ""


class ReportAnswer:
    """IMCS-V2-MRG: an object of report sections, or a report string split by its headings."""

    name = "cblue_report"
    json_is_answer = True

    def json_schema(self, sample: Sample) -> dict[str, Any] | None:
        """An object of the six report sections, each a string."""
        return {
            "type": "object",
            "properties": {section: {"type": "string"} for section in REPORT_SECTIONS},
            "required": list(REPORT_SECTIONS),
            "additionalProperties": False,
        }

    def check(self, answer: Any, sample: Sample) -> Checked:
        if isinstance(answer, str):
            # the format document's type: a report string, read by its section headings (a
            # report on one line is split at them and flagged degraded)
            report, degraded = read_report(answer, skip_lead_in=False)
            if not report and answer.strip() not in ("", REPORT_LEAD_IN):
                return Checked(
                    answer,
                    Status.INVALID,
                    "report string without any `<section>：` heading "
                    f"({', '.join(REPORT_SECTIONS)}): no report",
                )
            return Checked(report, degraded=degraded)
        if not isinstance(answer, dict):
            return Checked(
                answer,
                Status.INVALID,
                f"report must be an object of sections or a string, got {_type_name(answer)}",
            )
        gold_sections = sample.gold.keys() if isinstance(sample.gold, dict) else ()
        for section in (*REPORT_SECTIONS, *gold_sections):
            if section in answer and not isinstance(answer[section], str):
                return Checked(
                    answer,
                    Status.INVALID,
                    f"section {section} must be a string, got {_type_name(answer[section])}",
                )
        return Checked(answer)

    def random(self, sample: Sample, rng: random.Random) -> dict[str, str]:
        return {}


registry.answer_schemas.add("cblue_entities", ListAnswer("cblue_entities"))
registry.answer_schemas.add("cblue_triples", ListAnswer("cblue_triples"))
registry.answer_schemas.add("cblue_events", ListAnswer("cblue_events"))
registry.answer_schemas.add("cblue_normalizations", ListAnswer("cblue_normalizations"))
registry.answer_schemas.add("cblue_entity_attrs", ListAnswer("cblue_entity_attrs"))
registry.answer_schemas.add("cblue_label", LabelAnswer())
registry.answer_schemas.add("cblue_reply", ReplyAnswer())
registry.answer_schemas.add("cblue_report", ReportAnswer())
