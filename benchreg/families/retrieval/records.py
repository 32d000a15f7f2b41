"""The records of a retrieval data root: set entries (spec 004 section 1) and manifest rows.

The models check types and closed vocabularies; the rules that need the manifest or other
entries (region shapes, gold sources, revisions, duplicates, times) are in validators.py.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Modality = Literal["pdf", "image", "ui_screenshot", "video", "code", "conversation"]
AnswerFormat = Literal["str", "int", "float", "list", "none"]
SPLITS = ("dev", "test")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Gold(_Strict):
    source_id: str = Field(min_length=1)
    region: dict[str, Any]


class Scope(_Strict):
    holder: str | None = None
    session: str | None = None
    scenario: str | None = None


class Origin(_Strict):
    dataset: str = Field(min_length=1)
    revision: str = Field(min_length=1)
    item: str | None = None
    license: str | None = None


class Entry(_Strict):
    """One annotated query. `split` is checked by the validator (an unknown split is a rule
    violation named with the query id, not a type error)."""

    query_id: str = Field(min_length=1)
    modality: Modality
    question: str
    answer: Any = None
    answer_format: AnswerFormat
    gold: list[Gold]
    scope: Scope = Field(default_factory=Scope)
    as_of: str | None = None
    unanswerable: bool
    origin: Origin
    split: str


class ManifestRow(BaseModel):
    """One corpus source. Extra fields (e.g. `format`, notes) are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    source_id: str = Field(min_length=1)
    modality: Modality
    path: str | None = None  # relative to corpus/; absent when the source cannot be shipped
    sha256: str | None = None
    dataset: str = Field(min_length=1)
    revision: str = Field(min_length=1)
    license: str
    annotation_source: str = Field(min_length=1)
    observed_at: str | None = None
    holder: str | None = None
