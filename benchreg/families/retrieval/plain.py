"""Set entries read without pydantic when they are plainly valid: :func:`plain_entry`.

Validating 100,000 entries with the :class:`~benchreg.families.retrieval.records.Entry` model
costs seconds on a first run. An entry decoded from JSON almost always has exactly the types the
model asks for, so nothing needs coercing: :func:`plain_entry` checks that (exact types, the
closed vocabularies, the required and allowed keys, non-empty strings where the model says
``min_length=1``, strings the model can read as unicode) and gives a :class:`PlainEntry` with
the attributes, and the values, ``Entry.model_validate`` gives. Anything else gives None: the
caller then validates with the model, which names the problem as before.
"""

from __future__ import annotations

from typing import Any, NamedTuple, get_args

from pydantic import BaseModel

from benchreg.families.retrieval.records import AnswerFormat, Entry, Gold, Modality, Origin, Scope


class PlainGold(NamedTuple):
    source_id: str
    region: dict[str, Any]


class PlainScope(NamedTuple):
    holder: str | None = None
    session: str | None = None
    scenario: str | None = None


class PlainOrigin(NamedTuple):
    dataset: str
    revision: str
    item: str | None = None
    license: str | None = None


class PlainEntry(NamedTuple):
    """The attributes of :class:`~benchreg.families.retrieval.records.Entry` (same names, same
    order), for an entry that needed no coercion."""

    query_id: str
    modality: str
    question: str
    answer: Any
    answer_format: str
    gold: list[PlainGold]
    scope: PlainScope
    as_of: str | None
    unanswerable: bool
    origin: PlainOrigin
    split: str


MODALITY_NAMES = frozenset(get_args(Modality))
ANSWER_FORMATS = frozenset(get_args(AnswerFormat))


def _keys(model: type[BaseModel]) -> tuple[frozenset[str], frozenset[str]]:
    """(required, allowed) keys of a model, read from its fields."""
    fields = model.model_fields
    return frozenset(n for n, f in fields.items() if f.is_required()), frozenset(fields)


REQUIRED, ALLOWED = _keys(Entry)
GOLD_KEYS = _keys(Gold)[1]
SCOPE_KEYS = _keys(Scope)[1]
ORIGIN_REQUIRED, ORIGIN_KEYS = _keys(Origin)
NO_SCOPE = PlainScope()


def _scope(data: Any) -> PlainScope | None:
    if type(data) is not dict or not data.keys() <= SCOPE_KEYS:
        return None  # (None too: the model's scope is not optional, it names the error)
    get = data.get
    holder, session, scenario = get("holder"), get("session"), get("scenario")
    if (
        (holder is None or type(holder) is str)
        and (session is None or type(session) is str)
        and (scenario is None or type(scenario) is str)
    ):
        return PlainScope(holder, session, scenario)
    return None


def _origin(data: Any) -> PlainOrigin | None:
    if type(data) is not dict or not ORIGIN_REQUIRED <= data.keys() <= ORIGIN_KEYS:
        return None
    dataset, revision = data["dataset"], data["revision"]
    item, license_ = data.get("item"), data.get("license")
    if (
        type(dataset) is str
        and dataset
        and type(revision) is str
        and revision
        and (item is None or type(item) is str)
        and (license_ is None or type(license_) is str)
    ):
        return PlainOrigin(dataset, revision, item, license_)
    return None


def _gold(data: Any) -> list[PlainGold] | None:
    if type(data) is not list:
        return None
    gold = []
    for item in data:
        if type(item) is not dict or item.keys() != GOLD_KEYS:
            return None
        source, region = item["source_id"], item["region"]
        if type(source) is not str or not source or type(region) is not dict:
            return None
        for key in region:
            if type(key) is not str:
                return None
        # the region as decoded (the model holds an equal copy; sample_of copies it anyway)
        gold.append(PlainGold(source, region))
    return gold


def _unicode(entry: PlainEntry) -> bool:
    """Every ``str`` field readable as unicode (the model refuses lone surrogates)."""
    texts = [entry.query_id, entry.question, entry.split, *(g.source_id for g in entry.gold)]
    texts += [t for t in (entry.as_of, *entry.scope, *entry.origin) if t is not None]
    joined = "".join(texts)
    if joined.isascii():
        return True
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def plain_entry(data: Any) -> PlainEntry | None:
    """The entry ``data`` as ``Entry.model_validate`` reads it, when no field needs coercing or
    is invalid; None otherwise (validate with the model then)."""
    if type(data) is not dict or not REQUIRED <= data.keys() <= ALLOWED:
        return None
    query_id, modality, question = data["query_id"], data["modality"], data["question"]
    answer_format, unanswerable, split = data["answer_format"], data["unanswerable"], data["split"]
    as_of = data.get("as_of")
    if not (
        type(query_id) is str
        and query_id
        and type(modality) is str
        and modality in MODALITY_NAMES
        and type(question) is str
        and type(answer_format) is str
        and answer_format in ANSWER_FORMATS
        and type(unanswerable) is bool
        and type(split) is str
        and (as_of is None or type(as_of) is str)
    ):
        return None
    scope = _scope(data["scope"]) if "scope" in data else NO_SCOPE
    origin = _origin(data["origin"])
    gold = _gold(data["gold"])
    if scope is None or origin is None or gold is None:
        return None
    entry = PlainEntry(
        query_id,
        modality,
        question,
        data.get("answer"),
        answer_format,
        gold,
        scope,
        as_of,
        unanswerable,
        origin,
        split,
    )
    return entry if _unicode(entry) else None
