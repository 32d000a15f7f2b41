"""Model text -> structured answer, one parser per task.

Each parser reads the answer text formats of the PromptCBLUE `target` fields (the same formats the
official post-processing, `post_generate_process.py`, understands) and gives the same items as the
official post-processing does for any text that holds an answer, so such text predictions score
exactly as the official pipeline scores them. Parsing the targets of a dev file reproduces its
`dev_structured.json`.

Formats (one line per entry; `，` separates values; `：` follows a heading):
- entities (CMeEE-V2, IMCS-V2-NER): `<type>实体：m1，m2` per answer choice; a lead-in line first.
- triples (CMeIE): `具有<predicate>关系的头尾实体对如下：头实体为<s>，尾实体为<o>。...` per line.
- events (CHIP-CDEE): lead-in line, then `主体词：x；发生状态：y；描述词：a，b；解剖部位：c`.
- normalisation (CHIP-CDN): the last line lists chosen options; other words are dropped.
- entity attributes (CHIP-MDCFNPC, IMCS-V2-SR): lead-in line, then `<entity>：<attr>`; an attr
  outside the answer choices becomes the task's fallback attr (as the official code does).
- labels and replies: the stripped text (CHIP-STS maps 相同/不同 to 是的/不是).
- reports (IMCS-V2-MRG): lead-in line, then `<section>：<text>` for the six sections. A report
  written on one line (sections joined by `；`) is split at its headings and flagged `degraded`.

No parser maps a label by a fuzzy match: labels are taken as written (CHIP-STS's 相同/不同 and the
fallback attrs of CHIP-MDCFNPC / IMCS-V2-SR are the official post-processing's own rules).

Text that yields no answer is not an empty answer: when a registered parser finds nothing in the
task's format (no label, no reply, no entity heading, no option on CHIP-CDN's last line, no event
or finding line, no report section) and the text is not the task's explicit empty answer
(:data:`EXPLICIT_EMPTY`, e.g. `上述句子没有指定类型实体`, or headings with nothing after them),
it raises :class:`NoAnswer` (a ParseError: the sample is `invalid` and scores as wrong). The
exception carries what the official post-processing makes of the text (the empty answer), which is
what gold given as text means (an empty `target` of a test split).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.text import split_reasoning
from benchreg.core.types import Degraded, Sample
from benchreg.families.cblue.catalogue import REPORT_SECTIONS
from benchreg.families.cblue.formats import (
    EVENT_LEAD_IN,
    MDCFNPC_LEAD_IN,
    NO_ENTITIES,
    NO_NORMALIZATION,
    REPORT_LEAD_IN,
    SR_LEAD_IN,
)

EVENT_KEYS: tuple[str, ...] = ("主体词", "发生状态", "描述词", "解剖部位")
EVENT_LIST_KEYS = frozenset({"描述词", "解剖部位"})
SR_FALLBACK_ATTR = "无法根据上下文确定病人是否患有该症状"
MDCFNPC_FALLBACK_ATTR = "不标注"
STS_SYNONYMS = {"相同": "是的", "不同": "不是"}
NO_TRIPLES = "没有指定类型的三元组"
# The whole (stripped) text that states an empty answer in the task's own words, per parser.
EXPLICIT_EMPTY: dict[str, frozenset[str]] = {
    "entities": frozenset({NO_ENTITIES}),
    "triples": frozenset({NO_TRIPLES}),
    "normalizations": frozenset({NO_NORMALIZATION}),
    "events": frozenset({EVENT_LEAD_IN}),
    "mdcfnpc": frozenset({MDCFNPC_LEAD_IN}),
    "sr": frozenset({SR_LEAD_IN}),
    "report": frozenset({REPORT_LEAD_IN}),
}


class NoAnswer(ParseError):
    """Model text in which the task's parser finds no answer (and that is not the task's explicit
    empty answer): the sample is `invalid`. ``official`` is what the official post-processing
    makes of the text (the task's empty answer), for gold given as text."""

    def __init__(self, message: str, official: Any) -> None:
        super().__init__(message)
        self.official = official


def _explicit_empty(kind: str, text: str) -> bool:
    return text.strip() in EXPLICIT_EMPTY.get(kind, frozenset())


def _choices(sample: Sample) -> list[str]:
    choices = sample.input.get("answer_choices")
    if not isinstance(choices, list):
        raise ParseError(f"sample {sample.id} has no answer choices to parse against")
    return [str(c) for c in choices]


def _split_values(text: str) -> list[str]:
    return [v.strip() for v in text.split("，") if v.strip()]


def parse_entities(text: str, choices: Sequence[str]) -> list[dict[str, str]]:
    """`<type>实体：m1，m2` lines, looked up choice by choice (items follow the choice order)."""
    lines = text.split("\n")
    items: list[dict[str, str]] = []
    for choice in choices:
        start, heading = f"{choice}实体", f"{choice}实体："
        for line in lines:
            if line.startswith(start):
                for mention in _split_values(line.replace(heading, "")):
                    items.append({"entity": mention, "type": choice})
    return items


def parse_triples(text: str) -> list[dict[str, str]]:
    items: list[dict[str, str]] = []
    for line in text.split("\n"):
        # the predicate sits between the leading `具有` and `关系的头尾实体对`
        predicate = line.split("关系的头尾实体对")[0][2:].strip()
        body = line.replace(f"具有{predicate}关系的头尾实体对如下：", "")
        for statement in body.split("。"):
            parts = statement.split("，尾实体为")
            if len(parts) < 2:
                continue
            subject = parts[0].replace("头实体为", "").strip()
            obj = parts[1].replace("尾实体为", "").strip()
            items.append({"predicate": predicate, "subject": subject, "object": obj})
    return items


def parse_normalizations(text: str, choices: Sequence[str]) -> list[dict[str, str]]:
    allowed = set(choices)
    chosen: list[str] = []
    for word in _split_values(text.split("\n")[-1]):
        if word in allowed and word not in chosen:
            chosen.append(word)
    return [{"entity": w, "type": "normalization"} for w in chosen]


def parse_events(text: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for line in text.split("\n")[1:]:
        event: dict[str, Any] = {}
        for field in line.split("；"):
            # `field` is rebound on a match, so a value that itself starts with a later heading
            # fills that heading too; the official post-processing behaves the same way. The
            # headings before the first one the field can start with cannot match it.
            first = _FIRST_EVENT_HEADING.get(field[:1])
            if first is None:
                continue
            for key, heading, is_list in _EVENT_HEADINGS[first:]:
                if field.startswith(heading):
                    field = field.replace(heading, "").strip()
                    event[key] = _split_values(field) if is_list else field
        for key, _, is_list in _EVENT_HEADINGS:
            if key not in event:
                event[key] = [] if is_list else ""
        events.append(event)
    return events


_EVENT_HEADINGS = tuple((key, f"{key}：", key in EVENT_LIST_KEYS) for key in EVENT_KEYS)
_HEADING_TEXTS = tuple(heading for _, heading, _ in _EVENT_HEADINGS)
# first character of a heading -> index of the first heading starting with it
_FIRST_EVENT_HEADING = {h[1][0]: i for i, h in reversed(list(enumerate(_EVENT_HEADINGS)))}


def parse_entity_attrs(
    text: str, choices: Sequence[str], fallback_attr: str
) -> list[dict[str, str]]:
    allowed = set(choices)
    items: list[dict[str, str]] = []
    for line in text.split("\n")[1:]:
        parts = line.split("：")
        if len(parts) != 2:
            continue
        entity, attr = parts
        items.append({"entity": entity.strip(), "attr": attr if attr in allowed else fallback_attr})
    return items


def parse_report(text: str, *, skip_lead_in: bool = True) -> dict[str, str]:
    """Report sections from `<section>：<text>` lines; a later line of a section wins.

    Model text starts with a lead-in line that is skipped (as the official post-processing
    does); a report string given as a structured answer is read from its first line on.
    """
    lines = text.strip().split("\n")
    if skip_lead_in:
        lines = lines[1:]
    report: dict[str, str] = {}
    for section in REPORT_SECTIONS:
        heading = f"{section}："
        for line in lines:
            if line.startswith(heading):
                report[section] = line.strip().split(heading)[-1].strip()
    return report


# A section heading inside a line: at the start, or after a separator a one-line report puts
# between sections (`；`, `;`, `。`, white space) or after the lead-in's `：`. A `，` is not one, so
# `现病史：……，诊断：……` inside a section is not read as a heading.
_INLINE_HEADING = re.compile(
    r"(?<![^\s；;。：])(" + "|".join(map(re.escape, REPORT_SECTIONS)) + r")："
)
ONE_LINE_REPORT = (
    "IMCS-V2-MRG report with several sections on one line (not one `<section>：<text>` line "
    "each): split at the section headings"
)


def split_inline_report(text: str) -> dict[str, str]:
    """Report sections from headings anywhere in ``text`` (a report written on one line, sections
    joined by `；`): each section runs to the next heading; text before the first heading (the
    lead-in) is dropped, a trailing `；` is removed, a later section of the same name wins."""
    found = list(_INLINE_HEADING.finditer(text))
    report: dict[str, str] = {}
    for match, following in zip(found, [*found[1:], None], strict=True):
        end = following.start() if following is not None else len(text)
        report[match.group(1)] = text[match.end() : end].strip().rstrip("；;").strip()
    return report


def read_report(text: str, *, skip_lead_in: bool = True) -> tuple[dict[str, str], str | None]:
    """The report sections and, when they could only be read by the one-line fallback, why.

    The documented layout (one `<section>：<text>` line per section, :func:`parse_report`) is read
    as the official post-processing reads it. When a line holds several section headings and
    splitting at them finds sections that the line layout misses (a report whose sections are
    joined by `；` on one line, which the line layout reads as one section, or as nothing when
    the line is taken as the lead-in), the split sections are the answer and the reason says so.
    """
    report = parse_report(text, skip_lead_in=skip_lead_in)
    crowded = any(len(_INLINE_HEADING.findall(line)) > 1 for line in text.split("\n"))
    if not crowded:
        return report, None
    inline = split_inline_report(text)
    if not set(inline) - set(report):
        return report, None
    return inline, ONE_LINE_REPORT


def parse_label(text: str) -> str:
    return text.strip()


def parse_sts_label(text: str) -> str:
    label = text.strip()
    return STS_SYNONYMS.get(label, label)


# --- registered parsers: one per task, named in its task entry (`parser:`) ----------------------
#
# Each returns what the official post-processing returns, except that text yielding no answer at
# all (and not stating an empty answer) raises NoAnswer instead of passing for an empty answer.


def _entities(text: str, sample: Sample) -> list[dict[str, str]]:
    choices = _choices(sample)
    items = parse_entities(text, choices)
    if items or _explicit_empty("entities", text):
        return items
    headings = tuple(f"{choice}实体" for choice in choices)
    if any(line.startswith(headings) for line in text.split("\n")):
        return items  # the entity headings, none filled: an explicit empty answer
    raise NoAnswer(
        f"no `<type>实体：` line for any entity type of the sample, and not {NO_ENTITIES!r}",
        items,
    )


_TRIPLE_HEADING = re.compile(r"^具有.+关系的头尾实体对如下：")


def _triples(text: str, sample: Sample) -> list[dict[str, str]]:
    items = parse_triples(text)
    if items or _explicit_empty("triples", text):
        return items
    if any(_TRIPLE_HEADING.match(line) for line in text.split("\n")):
        return items  # relation headings with no pairs after them: an explicit empty answer
    raise NoAnswer("no `具有<relation>关系的头尾实体对如下：` line and no head/tail pair", items)


def _normalizations(text: str, sample: Sample) -> list[dict[str, str]]:
    items = parse_normalizations(text, _choices(sample))
    if items or _explicit_empty("normalizations", text.split("\n")[-1]):
        return items
    raise NoAnswer(
        f"no answer option on the last line (the line read), and not {NO_NORMALIZATION!r}", items
    )


def _events(text: str, sample: Sample) -> list[dict[str, Any]]:
    events = parse_events(text)
    if _explicit_empty("events", text):
        return events
    fields = (field for line in text.split("\n")[1:] for field in line.split("；"))
    if any(field.startswith(_HEADING_TEXTS) for field in fields):
        return events  # every line after the lead-in is an event (the official quirk)
    raise NoAnswer(
        "no event line (`主体词：…；发生状态：…；描述词：…；解剖部位：…`) after the lead-in line",
        events,
    )


def _entity_attrs(text: str, sample: Sample, kind: str, fallback: str) -> list[dict[str, str]]:
    items = parse_entity_attrs(text, _choices(sample), fallback)
    if items or _explicit_empty(kind, text):
        return items
    raise NoAnswer("no `<entity>：<attribute>` line after the lead-in line", items)


def _mdcfnpc(text: str, sample: Sample) -> list[dict[str, str]]:
    return _entity_attrs(text, sample, "mdcfnpc", MDCFNPC_FALLBACK_ATTR)


def _sr(text: str, sample: Sample) -> list[dict[str, str]]:
    return _entity_attrs(text, sample, "sr", SR_FALLBACK_ATTR)


def _label(text: str, sample: Sample) -> str:
    label = parse_label(text)
    if not label:
        raise NoAnswer("empty text: no label", label)
    return label


def _sts(text: str, sample: Sample) -> str:
    if not text.strip():
        raise NoAnswer("empty text: no label", "")
    return parse_sts_label(text)


def _reply(text: str, sample: Sample) -> str:
    reply = text.strip()
    if not reply:
        raise NoAnswer("empty text: no reply", reply)
    return reply


def _report(text: str, sample: Sample) -> dict[str, str] | Degraded:
    report, degraded = read_report(text)
    if not report and not _explicit_empty("report", text):
        raise NoAnswer(
            "no `<section>：<text>` line after the lead-in line (the first line is the lead-in, "
            "as in the official post-processing)",
            report,
        )
    return Degraded(report, degraded) if degraded else report


PARSERS: dict[str, Callable[[str, Sample], Any]] = {
    "cblue_cmeee_v2": _entities,
    "cblue_cmeie": _triples,
    "cblue_chip_cdn": _normalizations,
    "cblue_chip_cdee": _events,
    "cblue_chip_sts": _sts,
    "cblue_chip_ctc": _label,
    "cblue_chip_mdcfnpc": _mdcfnpc,
    "cblue_kuake_ir": _label,
    "cblue_kuake_qic": _label,
    "cblue_kuake_qqr": _label,
    "cblue_kuake_qtr": _label,
    "cblue_meddg": _reply,
    "cblue_imcs_v2_mrg": _report,
    "cblue_imcs_v2_ner": _entities,
    "cblue_imcs_v2_dac": _label,
    "cblue_imcs_v2_sr": _sr,
}


def without_reasoning(parser: Callable[[str, Sample], Any]) -> Callable[[str, Sample], Any]:
    """``parser`` on the reply with its reasoning blocks removed (the core's one helper,
    :func:`benchreg.core.text.split_reasoning`), as every family's parser does: a reply that
    starts with `<think>...</think>` is read by what follows it. A reply without reasoning is
    read exactly as given (the official post-processing's line rules see its every line)."""

    @functools.wraps(parser)
    def read(text: str, sample: Sample) -> Any:
        if "<" not in text:  # every reasoning tag starts with `<`: nothing to split (the cost)
            return parser(text, sample)
        split = split_reasoning(text)
        return parser(split.answer if split.reasoning is not None else text, sample)

    return read


for _name, _parser in PARSERS.items():
    registry.parsers.add(_name, without_reasoning(_parser))
