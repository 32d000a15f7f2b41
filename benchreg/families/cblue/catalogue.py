"""The 16 PromptCBLUE tasks: what the task entries do not say (official names, aliases, answer
kind, official label lists, item keys).

A task entry names its PromptCBLUE task once, as the loader param `task`; the loader puts it on
every sample (`sample.input["task_dataset"]`) and everything else reads it from there or from the
loader params. The label lists are the ones the official evaluator (evaluate.py) passes for each
classification task; their first entry is the empty label (an empty answer counts as that label),
and they bound the "in range" labels of a task.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from benchreg.core.errors import BenchregError
from benchreg.core.types import Sample

Kind = Literal["extraction", "classification", "reply", "report"]

REPORT_SECTIONS: tuple[str, ...] = ("主诉", "现病史", "辅助检查", "既往史", "诊断", "建议")


@dataclass(frozen=True, slots=True)
class TaskInfo:
    name: str  # the name the results.json format uses
    kind: Kind
    aliases: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()  # official label list (classification only), first = empty
    item_keys: tuple[str, ...] = field(default=())  # extraction only: keys of one item

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def empty_label(self) -> str:
        """The label an empty classification answer counts as (the first official label)."""
        return self.labels[0] if self.labels else ""

    def empty_answer(self) -> Any:
        """The task's empty answer (`[]`, `""`, `{}`): what results.json holds for an invalid or
        missing prediction. It is not what such a prediction scores as: that is wrong."""
        return {"extraction": [], "classification": "", "reply": "", "report": {}}[self.kind]


NOT_LISTED = "非上述类型"

_TASKS = (
    TaskInfo("CMeEE-V2", "extraction", item_keys=("entity", "type")),
    TaskInfo(
        "CMeIE", "extraction", aliases=("CMeIE-V2",), item_keys=("predicate", "subject", "object")
    ),
    TaskInfo("CHIP-CDN", "extraction", item_keys=("entity", "type")),
    TaskInfo("CHIP-CDEE", "extraction", item_keys=("主体词", "发生状态", "描述词", "解剖部位")),
    TaskInfo("CHIP-STS", "classification", labels=("是的", "不是")),
    TaskInfo(
        "CHIP-CTC",
        "classification",
        labels=(
            NOT_LISTED,
            "疾病",
            "症状(患者感受)",
            "体征(医生检测）",
            "怀孕相关",
            "肿瘤进展",
            "疾病分期",
            "过敏耐受",
            "器官组织状态",
            "预期寿命",
            "口腔相关",
            "药物",
            "治疗或手术",
            "设备",
            "护理",
            "诊断",
            "实验室检查",
            "风险评估",
            "受体状态",
            "年龄",
            "特殊病人特征",
            "读写能力",
            "性别",
            "教育情况",
            "居住情况",
            "种族",
            "知情同意",
            "参与其它试验",
            "研究者决定",
            "能力",
            "伦理审查",
            "依存性",
            "成瘾行为",
            "睡眠",
            "锻炼",
            "饮食",
            "酒精使用",
            "性取向",
            "吸烟状况",
            "献血",
            "病例来源",
            "残疾群体",
            "健康群体",
            "数据可及性",
            "含有多个类别",
        ),
    ),
    TaskInfo("CHIP-MDCFNPC", "extraction", item_keys=("entity", "attr")),
    TaskInfo("KUAKE-IR", "classification", labels=("相关", "不相关")),
    TaskInfo(
        "KUAKE-QIC",
        "classification",
        labels=(
            NOT_LISTED,
            "病情诊断",
            "病因分析",
            "治疗方案",
            "就医建议",
            "指标解读",
            "疾病描述",
            "后果表述",
            "注意事项",
            "功效作用",
            "医疗费用",
        ),
    ),
    TaskInfo(
        "KUAKE-QQR",
        "classification",
        labels=("完全一致", "后者是前者的语义子集", "后者是前者的语义父集", "语义无直接关联"),
    ),
    TaskInfo(
        "KUAKE-QTR",
        "classification",
        labels=("完全不匹配或者没有参考价值", "很少匹配有一些参考价值", "部分匹配", "完全匹配"),
    ),
    TaskInfo("MedDG", "reply"),
    TaskInfo("IMCS-V2-MRG", "report"),
    TaskInfo("IMCS-V2-NER", "extraction", item_keys=("entity", "type")),
    TaskInfo(
        "IMCS-V2-DAC",
        "classification",
        labels=(
            NOT_LISTED,
            "关于症状的询问",
            "关于症状的回答",
            "关于病因的询问",
            "关于病因的回答",
            "关于个人基本信息的询问",
            "关于个人基本信息的回答",
            "关于已有检查和治疗的提问",
            "关于已有检查和治疗的回答",
            "关于用药建议的提问",
            "关于用药建议的解答",
            "关于就医建议的提问",
            "关于就医建议的解答",
            "关于注意事项的提问",
            "关于注意事项的解答",
            "给出诊断",
        ),
    ),
    TaskInfo("IMCS-V2-SR", "extraction", item_keys=("entity", "attr")),
)

TASKS: dict[str, TaskInfo] = {t.name: t for t in _TASKS}
TASK_NAMES: tuple[str, ...] = tuple(TASKS)
_BY_ANY_NAME: dict[str, TaskInfo] = {n: t for t in _TASKS for n in t.names}


def lookup(name: str) -> TaskInfo | None:
    """The task called ``name`` (official name or alias), or None."""
    return _BY_ANY_NAME.get(name)


def task_info(name: str, *, where: str | None = None) -> TaskInfo:
    info = lookup(name)
    if info is None:
        raise BenchregError(
            f"unknown PromptCBLUE task {name!r}",
            where=where,
            fix=f"use one of {', '.join(TASK_NAMES)} (CMeIE-V2 is accepted for CMeIE)",
        )
    return info


def task_of_params(params: Mapping[str, Any], *, where: str | None = None) -> TaskInfo:
    """The PromptCBLUE task a task entry names as its loader param `task`."""
    name = params.get("task")
    if not isinstance(name, str) or not name:
        raise BenchregError(
            "a PromptCBLUE task entry must name its task as the loader param `task`",
            where=where,
            fix="write `loader: {name: cblue, params: {task: <task>}}`, e.g. task: CMeEE-V2",
        )
    return task_info(name, where=where)


def task_of_sample(sample: Sample) -> TaskInfo:
    """The task the loader put on the sample (`input["task_dataset"]`)."""
    return task_info(str(sample.input.get("task_dataset")), where=f"sample {sample.id}")
