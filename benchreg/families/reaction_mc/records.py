"""The question records of a V6 multiple-choice file (spec section 7), as pydantic types.

Structural rules checked here (a violation rejects the file, naming the file and question id):
options non-empty; every `meta` list (`yields`, `effective_scores`, `scores`,
`option_relative_scores`, `option_source_entries`) as long as `options`; `answer` a non-empty list
of valid option indices; `id` of the form `{table_id}_q{N}[_ref|_ref_control]` with the suffix of
the file's question type; `question_type` equal to the file's; `target_key` set for the
single_varying family; `reference_conditions` present and non-empty exactly for `*_reference`.
Numeric agreement (effective scores, relative scores, best indices) is the validator's job.

A question validates into a plain dict (TypedDicts, not models: the loader keeps its values as
the sample's, without a second copy); fields beyond the spec's are kept.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, NotRequired, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
    with_config,
)
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

QuestionType = Literal[
    "single_varying",
    "all_varying",
    "single_varying_reference",
    "all_varying_reference",
    "single_varying_reference_control",
    "all_varying_reference_control",
]
QUESTION_TYPES: tuple[str, ...] = get_args(QuestionType)
ALIGNED_META = (
    "yields",
    "effective_scores",
    "scores",
    "option_relative_scores",
    "option_source_entries",
)
ID_RE = re.compile(r"^(?P<table>.+)_q(?P<n>\d+)(?P<suffix>_ref_control|_ref)?$")
OUTCOME_KEYS = ("yield", "ee", "er", "dr", "rr")


def base_family(question_type: str) -> str:
    """``single_varying`` or ``all_varying``."""
    return "single_varying" if question_type.startswith("single_varying") else "all_varying"


def id_suffix(question_type: str) -> str:
    if question_type.endswith("_reference_control"):
        return "_ref_control"
    if question_type.endswith("_reference"):
        return "_ref"
    return ""


def base_id(question_id: str) -> str:
    """The id without its `_ref` / `_ref_control` suffix (pairs a reference with its control)."""
    match = ID_RE.match(question_id)
    if not match or not match.group("suffix"):
        return question_id
    return question_id[: -len(match.group("suffix"))]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Reference(_Open):
    """A reference condition group with its outcome.

    Accepted shapes: ``{"conditions": {...}, "yield": 59.0, "scores": {...}}`` or a flat condition
    dict whose outcome keys (`yield`, `ee`, `er`, `dr`, `rr`, `scores`, `effective_score`) sit
    beside the condition keys.
    """

    conditions: dict[str, Any]
    outcome: dict[str, Any] = Field(default_factory=dict)
    effective_score: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        data = dict(value)
        scores = data.pop("scores", None)
        outcome = dict(scores) if isinstance(scores, dict) else {}
        for key in OUTCOME_KEYS:
            if key in data and key not in outcome:
                outcome[key] = data[key]
            data.pop(key, None)
        effective = data.pop("effective_score", None)
        if "conditions" in data:
            conditions = data.pop("conditions")
            extra = data
        else:
            conditions, extra = data, {}
        return {
            "conditions": conditions,
            "outcome": outcome,
            "effective_score": effective,
            **{k: v for k, v in extra.items() if k not in ("outcome",)},
        }


_OPEN = ConfigDict(extra="allow")  # fields beyond the spec's are kept as they are


@with_config(_OPEN)
class Molecule(TypedDict):
    content: NotRequired[str]
    SMILES: NotRequired[str]


@with_config(_OPEN)
class QuestionInput(TypedDict):
    reactants: list[Molecule]
    products: list[Molecule]
    constant_conditions: NotRequired[dict[str, Any]]
    fixed_conditions: NotRequired[dict[str, Any] | None]
    reference_conditions: NotRequired[list[Reference] | None]


@with_config(_OPEN)
class QuestionMeta(TypedDict):
    yields: list[Any]
    effective_scores: list[Any]
    scores: list[dict[str, Any]]
    option_relative_scores: list[Any]
    option_source_entries: list[Any]


def _strict_indices(value: Any) -> Any:
    if isinstance(value, list) and any(
        isinstance(v, bool) or not isinstance(v, int) for v in value
    ):
        raise ValueError("answer must be a list of integer option indices")
    return value


@with_config(_OPEN)
class QuestionFields(TypedDict):
    id: str
    question_type: QuestionType
    target_key: NotRequired[str | None]
    varying_keys: NotRequired[list[str]]
    input: QuestionInput
    options: Annotated[list[dict[str, Any]], Field(min_length=1)]
    answer: Annotated[list[int], BeforeValidator(_strict_indices), Field(min_length=1)]
    meta: QuestionMeta


def _consistent(question: QuestionFields) -> QuestionFields:
    """The rules across fields; then the spec's defaults for absent optional fields (a validated
    question is a plain dict with every field the loader reads)."""
    n = len(question["options"])
    meta = question["meta"]
    for name in ALIGNED_META:
        length = len(meta[name])  # type: ignore[literal-required]
        if length != n:
            raise ValueError(f"meta.{name} has {length} entries for {n} options")
    bad = [i for i in question["answer"] if not 0 <= i < n]
    if bad:
        raise ValueError(f"answer index {bad[0]} is outside 0..{n - 1}")
    question_type = question["question_type"]
    target_key = question.setdefault("target_key", None)
    if base_family(question_type) == "single_varying" and not target_key:
        raise ValueError("a single_varying question needs a target_key")
    inp = question["input"]
    refs = inp.get("reference_conditions")
    if question_type.endswith("_reference"):
        if not refs:
            raise ValueError("a reference question needs input.reference_conditions")
    elif refs:
        raise ValueError(f"a {question_type} question must not carry references")
    question.setdefault("varying_keys", [])
    inp.setdefault("constant_conditions", {})
    for molecule in (*inp["reactants"], *inp["products"]):
        molecule.setdefault("content", "")
        molecule.setdefault("SMILES", "")
    return question


Question = Annotated[QuestionFields, AfterValidator(_consistent)]


def check_identity(question: QuestionFields, file_type: str) -> str | None:
    """Why the id / question_type do not fit the file (None when they do)."""
    if question["question_type"] != file_type:
        return f"question_type {question['question_type']!r} in a {file_type} file"
    match = ID_RE.match(question["id"])
    if not match:
        return "id does not match {table_id}_q{N}[_ref][_ref_control]"
    suffix = match.group("suffix") or ""
    expected = id_suffix(file_type)
    if suffix != expected:
        return (
            f"id suffix {suffix or '(none)'!r} does not fit {file_type} "
            f"(expected {expected or 'no suffix'!r})"
        )
    return None

