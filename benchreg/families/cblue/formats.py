"""Structured answer -> answer text in the PromptCBLUE `target` formats (the parsers' inverse).

Used to write the embedded sample and to turn structured answers into text predictions; for every
answer in the documented shape, parsing the rendered text gives the answer back (as item sets).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchreg.families.cblue.catalogue import REPORT_SECTIONS, task_info

ENTITY_LEAD_IN = "上述句子中的实体包含："
NO_ENTITIES = "上述句子没有指定类型实体"
EVENT_LEAD_IN = "上述句子中的临床发现事件如下："
MDCFNPC_LEAD_IN = "上述对话中临床发现实体以及其阴阳性判别如下："
SR_LEAD_IN = "当前对话中的症状及其阴阳性判断为："
REPORT_LEAD_IN = "上述问诊对话的诊疗报告如下："
NO_NORMALIZATION = "没有对应的标准化实体"


def render_entities(answer: Sequence[Mapping[str, str]], choices: Sequence[str]) -> str:
    if not answer:
        return NO_ENTITIES
    lines = [ENTITY_LEAD_IN]
    for choice in choices:
        mentions = [item["entity"] for item in answer if item["type"] == choice]
        lines.append(f"{choice}实体：{'，'.join(mentions)}")
    return "\n".join(lines)


def render_triples(answer: Sequence[Mapping[str, str]], choices: Sequence[str]) -> str:
    lines = []
    for predicate in choices:
        pairs = [
            f"头实体为{item['subject']}，尾实体为{item['object']}。"
            for item in answer
            if item["predicate"] == predicate
        ]
        lines.append(f"具有{predicate}关系的头尾实体对如下：{''.join(pairs)}")
    return "\n".join(lines)


def render_normalizations(answer: Sequence[Mapping[str, str]]) -> str:
    return "，".join(item["entity"] for item in answer) or NO_NORMALIZATION


def render_events(answer: Sequence[Mapping[str, Any]]) -> str:
    lines = [EVENT_LEAD_IN]
    for event in answer:
        lines.append(
            f"主体词：{event['主体词']}；发生状态：{event['发生状态']}；"
            f"描述词：{'，'.join(event['描述词'])}；解剖部位：{'，'.join(event['解剖部位'])}"
        )
    return "\n".join(lines)


def render_entity_attrs(answer: Sequence[Mapping[str, str]], lead_in: str) -> str:
    return "\n".join([lead_in, *(f"{item['entity']}：{item['attr']}" for item in answer)])


def render_report(answer: Mapping[str, str]) -> str:
    lines = [REPORT_LEAD_IN]
    lines += [f"{s}：{answer[s]}" for s in REPORT_SECTIONS if s in answer]
    return "\n".join(lines)


def render_target(task: str, answer: Any, choices: Sequence[str] | None = None) -> str:
    """The answer text of ``task`` (official name or alias) for a structured ``answer``."""
    info = task_info(task)
    options = list(choices or [])
    name = info.name
    if name in ("CMeEE-V2", "IMCS-V2-NER"):
        return render_entities(answer, options)
    if name == "CMeIE":
        return render_triples(answer, options)
    if name == "CHIP-CDN":
        return render_normalizations(answer)
    if name == "CHIP-CDEE":
        return render_events(answer)
    if name == "CHIP-MDCFNPC":
        return render_entity_attrs(answer, MDCFNPC_LEAD_IN)
    if name == "IMCS-V2-SR":
        return render_entity_attrs(answer, SR_LEAD_IN)
    if name == "IMCS-V2-MRG":
        return render_report(answer)
    return str(answer)
