"""Model text -> structured answer, one parser per task.

Each parser reads the answer text formats of the PromptCBLUE `target` fields (the same formats the
official post-processing, `post_generate_process.py`, understands) and gives the same items as the
official post-processing does for any text, so text predictions score exactly as the official
pipeline scores them. Parsing the targets of a dev file reproduces its `dev_structured.json`.

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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from benchreg.core import registry
from benchreg.core.errors import ParseError
from benchreg.core.types import Degraded, Sample
from benchreg.families.cblue.catalogue import REPORT_SECTIONS

EVENT_KEYS: tuple[str, ...] = ("主体词", "发生状态", "描述词", "解剖部位")
EVENT_LIST_KEYS = frozenset({"描述词", "解剖部位"})
SR_FALLBACK_ATTR = "无法根据上下文确定病人是否患有该症状"
MDCFNPC_FALLBACK_ATTR = "不标注"
STS_SYNONYMS = {"相同": "是的", "不同": "不是"}


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


def _entities(text: str, sample: Sample) -> list[dict[str, str]]:
    return parse_entities(text, _choices(sample))


def _triples(text: str, sample: Sample) -> list[dict[str, str]]:
    return parse_triples(text)


def _normalizations(text: str, sample: Sample) -> list[dict[str, str]]:
    return parse_normalizations(text, _choices(sample))


def _events(text: str, sample: Sample) -> list[dict[str, Any]]:
    return parse_events(text)


def _mdcfnpc(text: str, sample: Sample) -> list[dict[str, str]]:
    return parse_entity_attrs(text, _choices(sample), MDCFNPC_FALLBACK_ATTR)


def _sr(text: str, sample: Sample) -> list[dict[str, str]]:
    return parse_entity_attrs(text, _choices(sample), SR_FALLBACK_ATTR)


def _label(text: str, sample: Sample) -> str:
    return parse_label(text)


def _sts(text: str, sample: Sample) -> str:
    return parse_sts_label(text)


def _reply(text: str, sample: Sample) -> str:
    return text.strip()


def _report(text: str, sample: Sample) -> dict[str, str] | Degraded:
    report, degraded = read_report(text)
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

for _name, _parser in PARSERS.items():
    registry.parsers.add(_name, _parser)
