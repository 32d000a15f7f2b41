"""Write the embedded PromptCBLUE sample (benchreg/families/cblue/sample/).

Every record below was written for benchreg (16 tasks x 4); none is taken from PromptCBLUE or
CBLUE. The prompt wording follows the style of PromptCBLUE prompts, targets use the official
answer text formats (benchreg.families.cblue.formats), and dev_structured.json holds the
structured gold. Run from the project root:

    python -m builders.cblue.make_sample [--check] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchreg.families.cblue.formats import render_target

OUT = Path(__file__).resolve().parents[2] / "benchreg" / "families" / "cblue" / "sample"

HAS = "已有症状疾病或者假设未来可能发生的疾病等"
NOT_HAS = "未患有症状疾病"
UNSURE = "没有回答、不知道、回答不明确或者模棱两可不好推断"
IGNORE = "无实际意义的不标注或者和病人当前的状态独立不标注"
MDCFNPC_OPTIONS = [HAS, NOT_HAS, UNSURE, IGNORE]
SR_OPTIONS = ["没有患有该症状", "患有该症状", "无法根据上下文确定病人是否患有该症状"]
QQR_OPTIONS = ["完全一致", "后者是前者的语义子集", "后者是前者的语义父集", "语义无直接关联"]
QTR_OPTIONS = ["完全不匹配或者没有参考价值", "很少匹配有一些参考价值", "部分匹配", "完全匹配"]

TASK_TYPES = {
    "CMeEE-V2": "ner",
    "IMCS-V2-NER": "ner",
    "CMeIE": "spo_generation",
    "CHIP-CDN": "normalization",
    "CHIP-CDEE": "event_extraction",
    "CHIP-STS": "cls",
    "CHIP-CTC": "cls",
    "KUAKE-QIC": "cls",
    "IMCS-V2-DAC": "cls",
    "KUAKE-IR": "matching",
    "KUAKE-QQR": "matching",
    "KUAKE-QTR": "matching",
    "CHIP-MDCFNPC": "attr_cls",
    "IMCS-V2-SR": "attr_cls",
    "MedDG": "response_generation",
    "IMCS-V2-MRG": "report_generation",
}


def ents(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"entity": e, "type": t} for e, t in pairs]


def spo(*triples: tuple[str, str, str]) -> list[dict[str, str]]:
    return [{"predicate": p, "subject": s, "object": o} for p, s, o in triples]


def norm(*terms: str) -> list[dict[str, str]]:
    return [{"entity": t, "type": "normalization"} for t in terms]


def event(subject: str, status: str = "", desc: tuple[str, ...] = (), site: tuple[str, ...] = ()):
    return {"主体词": subject, "发生状态": status, "描述词": list(desc), "解剖部位": list(site)}


def attrs(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"entity": e, "attr": a} for e, a in pairs]


def report(*sections: str) -> dict[str, str]:
    keys = ("主诉", "现病史", "辅助检查", "既往史", "诊断", "建议")
    return dict(zip(keys, sections, strict=True))


def ner_prompt(text: str, labels: list[str]) -> str:
    return f"找出句子中的{'，'.join(labels)}实体：\n{text}\n答："


RECORDS: list[dict[str, Any]] = []


def add(
    task: str, prompt: str, answer: Any, choices: list[str] | None = None, target: str | None = None
) -> None:
    number = sum(1 for r in RECORDS if r["task_dataset"] == task) + 1
    RECORDS.append(
        {
            "input": prompt,
            "target": target if target is not None else render_target(task, answer, choices),
            "answer_choices": choices,
            "task_type": TASK_TYPES[task],
            "task_dataset": task,
            "sample_id": f"sample-{task.lower()}-{number}",
            "_answer": answer,
        }
    )


# --- CMeEE-V2 ---
c = ["临床表现", "医学检验项目", "药物", "身体部位"]
add(
    "CMeEE-V2",
    ner_prompt("患者三天前出现发热、咳嗽，血常规提示白细胞升高，予阿莫西林口服治疗。", c),
    ents(
        ("发热", "临床表现"), ("咳嗽", "临床表现"), ("血常规", "医学检验项目"), ("阿莫西林", "药物")
    ),
    c,
)
c = ["医疗程序", "身体部位", "疾病", "微生物类"]
add(
    "CMeEE-V2",
    f"医学实体识别：\n胃镜检查发现胃窦部黏膜充血水肿，考虑慢性浅表性胃炎。\n实体选项：{'，'.join(c)}\n答：",
    ents(("胃镜检查", "医疗程序"), ("胃窦部黏膜", "身体部位"), ("慢性浅表性胃炎", "疾病")),
    c,
)
c = ["药物", "疾病", "医院科室"]
add("CMeEE-V2", ner_prompt("本研究纳入的受试者均签署了知情同意书。", c), [], c)
c = ["微生物类", "医院科室", "疾病"]
add(
    "CMeEE-V2",
    ner_prompt("幽门螺杆菌感染者应至消化内科随诊。", c),
    ents(("幽门螺杆菌", "微生物类"), ("消化内科", "医院科室"), ("幽门螺杆菌感染", "疾病")),
    c,
)

# --- CMeIE ---
c = ["并发症", "药物治疗", "病因"]
add(
    "CMeIE",
    f"找出句子中具有{'，'.join(c)}关系的头尾实体对：\n高血压@长期血压控制不佳可导致左心室肥厚，常用药物包括氨氯地平。\n答：",
    spo(("并发症", "高血压", "左心室肥厚"), ("药物治疗", "高血压", "氨氯地平")),
    c,
)
c = ["临床表现", "药物治疗"]
add(
    "CMeIE",
    f"找出句子中具有{'，'.join(c)}关系的头尾实体对：\n缺铁性贫血@缺铁性贫血患者常表现为乏力、面色苍白，可口服硫酸亚铁补充铁剂。\n答：",
    spo(
        ("临床表现", "缺铁性贫血", "乏力"),
        ("临床表现", "缺铁性贫血", "面色苍白"),
        ("药物治疗", "缺铁性贫血", "硫酸亚铁"),
    ),
    c,
)
c = ["传播途径", "病因", "实验室检查"]
add(
    "CMeIE",
    f"流行性感冒@流感病毒主要通过飞沫传播。\n问题：句子中的{'，'.join(c)}等关系类型三元组是什么？\n答：",
    spo(("传播途径", "流行性感冒", "飞沫传播"), ("病因", "流行性感冒", "流感病毒")),
    c,
)
c = ["药物治疗", "影像学检查"]
add(
    "CMeIE",
    f"找出句子中具有{'，'.join(c)}关系的头尾实体对：\n骨质疏松@本章介绍骨质疏松的流行病学概况。\n答：",
    [],
    c,
)


# --- CHIP-CDN ---
def cdn_prompt(text: str, options: list[str]) -> str:
    return (
        f"诊断归一化：\n{text}\n选项：{'，'.join(options)}\n"
        "说明：从候选的ICD-10诊断标准词中选出与原诊断匹配的词\n答："
    )


c = ["下肢静脉血栓形成", "肺栓塞", "下肢静脉曲张"]
add("CHIP-CDN", cdn_prompt("右下肢深静脉血栓形成", c), norm("下肢静脉血栓形成"), c)
c = ["2型糖尿病", "糖尿病性周围神经病", "1型糖尿病", "周围神经炎"]
add(
    "CHIP-CDN", cdn_prompt("2型糖尿病伴周围神经病变", c), norm("2型糖尿病", "糖尿病性周围神经病"), c
)
c = ["高血压", "慢性胃炎"]
add("CHIP-CDN", cdn_prompt("左手擦伤", c), [], c)
c = ["急性扁桃体炎", "慢性扁桃体炎", "咽炎"]
add("CHIP-CDN", cdn_prompt("急性化脓性扁桃体炎", c), norm("急性扁桃体炎"), c)


# --- CHIP-CDEE ---
def cdee_prompt(text: str) -> str:
    note = "说明：临床发现事件由主体词，发生状态，描述词和解剖部位组成"
    return f"临床发现事件抽取：\n{text}\n{note}\n答："


add(
    "CHIP-CDEE",
    cdee_prompt("患者2天前无明显诱因出现上腹部阵发性疼痛，伴恶心，无呕吐。"),
    [event("疼痛", desc=("阵发性",), site=("上腹部",)), event("恶心"), event("呕吐", "否定")],
)
add(
    "CHIP-CDEE",
    cdee_prompt("查体：双肺呼吸音粗，未闻及明显干湿啰音。"),
    [event("呼吸音粗", site=("双肺",)), event("干湿啰音", "否定", desc=("明显",))],
)
add(
    "CHIP-CDEE",
    cdee_prompt("门诊拟“肺部结节性质待定”收入院。"),
    [event("结节", "不确定", site=("肺部",))],
)
add(
    "CHIP-CDEE",
    cdee_prompt("术后切口无红肿渗液，患者自述头晕、乏力较前缓解。"),
    [
        event("红肿", "否定", site=("切口",)),
        event("渗液", "否定", site=("切口",)),
        event("头晕", desc=("较前缓解",)),
        event("乏力", desc=("较前缓解",)),
    ],
)


# --- CHIP-STS ---
def sts_prompt(a: str, b: str, options: list[str]) -> str:
    return f"下面两个问题的意思相同吗？\n“{a}”，“{b}”\n选项：{'，'.join(options)}\n答："


c = ["是的", "不是"]
add("CHIP-STS", sts_prompt("糖尿病人能吃西瓜吗", "糖尿病患者可以吃西瓜吗", c), "是的", c)
add("CHIP-STS", sts_prompt("高血压需要终身服药吗", "高血压吃什么水果好", c), "不是", c)
c2 = ["相同", "不同"]
add(
    "CHIP-STS",
    sts_prompt("孕妇感冒了怎么办", "怀孕期间感冒怎么处理", c2),
    "是的",
    c2,
    target="相同",
)
add("CHIP-STS", sts_prompt("胃溃疡有哪些症状", "胃溃疡能治好吗", c2), "不是", c2, target="不同")


# --- CHIP-CTC ---
def ctc_prompt(text: str, options: list[str]) -> str:
    return f"判断临床试验筛选标准的类型：\n{text}\n选项：{'，'.join(options)}\n答："


c = ["年龄", "性别", "疾病", "知情同意"]
add("CHIP-CTC", ctc_prompt("年龄18至75岁。", c), "年龄", c)
c = ["知情同意", "药物", "睡眠", "设备"]
add("CHIP-CTC", ctc_prompt("自愿参加并签署书面知情同意书者。", c), "知情同意", c)
c = ["怀孕相关", "吸烟状况", "饮食", "年龄"]
add("CHIP-CTC", ctc_prompt("妊娠期或哺乳期妇女。", c), "怀孕相关", c)
c = ["年龄", "吸烟状况", "设备"]
add("CHIP-CTC", ctc_prompt("研究者认为不适合参加本研究的其他情况。", c), "非上述类型", c)


# --- CHIP-MDCFNPC ---
def mdcfnpc_prompt(dialogue: str, mentions: list[str]) -> str:
    return (
        f"判断对话中临床发现实体的阴阳性：\n{dialogue}\n临床发现实体：{'，'.join(mentions)}\n"
        f"阴阳性选项：{'，'.join(MDCFNPC_OPTIONS)}\n答："
    )


add(
    "CHIP-MDCFNPC",
    mdcfnpc_prompt(
        "患者：孩子昨晚开始发烧，最高38.5度，有点咳嗽。\n医生：有没有流鼻涕？\n患者：没有流鼻涕。",
        ["发烧", "咳嗽", "流鼻涕"],
    ),
    attrs(("发烧", HAS), ("咳嗽", HAS), ("流鼻涕", NOT_HAS)),
    MDCFNPC_OPTIONS,
)
add(
    "CHIP-MDCFNPC",
    mdcfnpc_prompt(
        "患者：最近总是胃胀。\n医生：有没有反酸烧心？\n患者：这个不太清楚。",
        ["胃胀", "反酸", "烧心"],
    ),
    attrs(("胃胀", HAS), ("反酸", UNSURE), ("烧心", UNSURE)),
    MDCFNPC_OPTIONS,
)
add(
    "CHIP-MDCFNPC",
    mdcfnpc_prompt(
        "医生：腹泻的孩子要注意补液，防止脱水。\n患者：好的，孩子现在拉肚子一天三次。",
        ["腹泻", "脱水", "拉肚子"],
    ),
    attrs(("腹泻", IGNORE), ("脱水", HAS), ("拉肚子", HAS)),
    MDCFNPC_OPTIONS,
)
add(
    "CHIP-MDCFNPC",
    mdcfnpc_prompt(
        "患者：我头痛两天了。\n医生：有没有恶心呕吐？\n患者：不恶心，也没吐。",
        ["头痛", "恶心", "呕吐"],
    ),
    attrs(("头痛", HAS), ("恶心", NOT_HAS), ("呕吐", NOT_HAS)),
    MDCFNPC_OPTIONS,
)


# --- KUAKE-IR ---
def ir_prompt(query: str, passage: str) -> str:
    return f"医疗搜索：{query}\n回答内容：{passage}\n回答与搜索相关吗？\n选项: 相关，不相关\n答："


c = ["相关", "不相关"]
add(
    "KUAKE-IR",
    ir_prompt(
        "感冒发烧吃什么药",
        "感冒引起的发热可以在医生指导下服用对乙酰氨基酚等退烧药，同时多喝水、注意休息。",
    ),
    "相关",
    c,
)
add(
    "KUAKE-IR",
    ir_prompt(
        "膝盖疼是什么原因", "牙龈出血可能与刷牙方式不当或维生素C缺乏有关，建议使用软毛牙刷。"
    ),
    "不相关",
    c,
)
add(
    "KUAKE-IR",
    ir_prompt("宝宝湿疹怎么护理", "婴儿湿疹应保持皮肤清洁湿润，洗澡水温不宜过高，可以涂抹保湿霜。"),
    "相关",
    c,
)
add(
    "KUAKE-IR",
    ir_prompt("近视可以做手术吗", "多吃胡萝卜对眼睛有好处，但不能治疗近视。"),
    "不相关",
    c,
)


# --- KUAKE-QIC ---
def qic_prompt(query: str, options: list[str]) -> str:
    return f"判断搜索词的意图：\n{query}\n选项：{'，'.join(options)}\n答："


c = ["病因分析", "治疗方案", "就医建议", "指标解读"]
add("KUAKE-QIC", qic_prompt("为什么会得胆结石", c), "病因分析", c)
c = ["功效作用", "就医建议", "疾病描述", "后果表述"]
add("KUAKE-QIC", qic_prompt("北京哪家医院看皮肤病好", c), "就医建议", c)
c = ["指标解读", "注意事项", "病情诊断", "医疗费用"]
add("KUAKE-QIC", qic_prompt("血红蛋白偏低说明什么", c), "指标解读", c)
c = ["治疗方案", "功效作用", "病因分析"]
add("KUAKE-QIC", qic_prompt("今天天气怎么样", c), "非上述类型", c)


# --- KUAKE-QQR ---
def qqr_prompt(a: str, b: str) -> str:
    return f"“{a}”，“{b}”。\n两个搜索词的语义关系是？\n选项：{'，'.join(QQR_OPTIONS)}\n答："


add("KUAKE-QQR", qqr_prompt("小孩发烧怎么办", "儿童发烧如何处理"), "完全一致", QQR_OPTIONS)
add("KUAKE-QQR", qqr_prompt("头痛的原因", "偏头痛的原因"), "后者是前者的语义子集", QQR_OPTIONS)
add(
    "KUAKE-QQR",
    qqr_prompt("女性缺铁性贫血吃什么", "贫血吃什么"),
    "后者是前者的语义父集",
    QQR_OPTIONS,
)
add("KUAKE-QQR", qqr_prompt("扁桃体发炎", "颈椎病"), "语义无直接关联", QQR_OPTIONS)


# --- KUAKE-QTR ---
def qtr_prompt(a: str, b: str) -> str:
    return f"搜索词：{a}\n页面标题：{b}\n两者的匹配程度如何？\n选项：{'，'.join(QTR_OPTIONS)}\n答："


add("KUAKE-QTR", qtr_prompt("孕妇可以吃螃蟹吗", "孕妇能不能吃螃蟹"), "完全匹配", QTR_OPTIONS)
add("KUAKE-QTR", qtr_prompt("脚气怎么根治", "脚气反复发作怎么治疗"), "部分匹配", QTR_OPTIONS)
add("KUAKE-QTR", qtr_prompt("感冒头疼", "感冒后咳嗽怎么办"), "很少匹配有一些参考价值", QTR_OPTIONS)
add(
    "KUAKE-QTR",
    qtr_prompt("鼻炎手术费用", "鸡蛋的营养价值"),
    "完全不匹配或者没有参考价值",
    QTR_OPTIONS,
)


# --- MedDG ---
def meddg_prompt(dialogue: str) -> str:
    return f"{dialogue}\n根据上述对话，给出医生的下一句回复\n答："


add(
    "MedDG",
    meddg_prompt(
        "患者：吃完饭后胃部隐隐作痛，有时候反酸（男，30岁）\n医生：这种情况持续多久了？\n患者：大概两周了。"
    ),
    "建议少食多餐，避免辛辣刺激食物，可以先服用奥美拉唑两周观察。",
)
add(
    "MedDG",
    meddg_prompt(
        "患者：宝宝拉肚子两天了，一天四五次，稀水样。\n医生：精神怎么样？尿量多吗？\n患者：精神还可以，尿也不少。"
    ),
    "可以先口服补液盐预防脱水，同时吃点蒙脱石散，如果出现精神差、尿少要及时就医。",
)
add(
    "MedDG",
    meddg_prompt(
        "患者：最近晚上总是睡不着，白天没精神（女，45岁）\n医生：睡前会玩手机或者喝茶吗？\n患者：经常玩手机。"
    ),
    "睡前一小时尽量不看手机，避免喝咖啡和浓茶，保持规律作息，必要时到睡眠门诊就诊。",
)
add(
    "MedDG",
    meddg_prompt("患者：体检发现尿酸偏高，520，需要吃药吗？\n医生：以前关节痛过吗？\n患者：没有。"),
    "目前没有痛风发作可以先控制饮食，少吃海鲜和动物内脏，多喝水，三个月后复查。",
)


# --- IMCS-V2-MRG ---
def mrg_prompt(dialogue: str) -> str:
    return (
        f"问诊对话历史：\n{dialogue}\n根据上述对话，给出诊疗报告\n"
        "说明：诊疗报告分为主诉, 现病史, 辅助检查, 既往史, 诊断, 建议这六个章节。\n答："
    )


add(
    "IMCS-V2-MRG",
    mrg_prompt(
        "患者：孩子咳嗽三天了，有痰。\n医生：发烧吗？\n患者：不发烧，前几天着凉了。\n"
        "医生：考虑上呼吸道感染，多喝水，可以吃点止咳化痰的药，注意体温变化。"
    ),
    report(
        "咳嗽三天。",
        "患儿三天前受凉后出现咳嗽，有痰，无发热。",
        "暂缺。",
        "不详。",
        "上呼吸道感染。",
        "多喝水，口服止咳化痰药物，观察体温变化。",
    ),
)
add(
    "IMCS-V2-MRG",
    mrg_prompt(
        "患者：宝宝拉肚子两天，一天四五次，稀水样。\n医生：精神怎么样？\n患者：精神还行，以前没生过什么病。\n"
        "医生：可以喝口服补液盐，吃蒙脱石散，注意饮食卫生。"
    ),
    report(
        "腹泻两天。",
        "患儿两天前出现腹泻，每日四五次，稀水样便，精神可。",
        "无。",
        "既往体健。",
        "小儿腹泻。",
        "口服补液盐，蒙脱石散止泻，注意饮食卫生。",
    ),
)
add(
    "IMCS-V2-MRG",
    mrg_prompt(
        "患者：宝宝脸上起了红疹子一周了，有点痒。\n医生：家里暖气热吗？\n患者：挺热的。\n"
        "医生：是婴儿湿疹，室温别太高，多涂保湿霜。"
    ),
    report(
        "面部皮疹一周。",
        "患儿一周前面部出现红色皮疹，伴瘙痒。",
        "暂缺。",
        "不详。",
        "婴儿湿疹。",
        "保持皮肤湿润，外用保湿霜，避免过热。",
    ),
)
add(
    "IMCS-V2-MRG",
    mrg_prompt(
        "患者：孩子今天开始发烧，38度。\n医生：可以先物理降温，超过38.5度吃退烧药，持续不退及时就诊。"
    ),
    report("发热一天", "发热一天", "", "", "发热待查", "物理降温，必要时就诊。"),
)


# --- IMCS-V2-NER ---
def imcs_ner_prompt(text: str, labels: list[str]) -> str:
    return f"找出下面问诊语句中的{'，'.join(labels)}实体：\n{text}\n答："


c = ["症状", "具体的药物名称"]
add(
    "IMCS-V2-NER",
    imcs_ner_prompt("宝宝咳嗽有痰，昨天吃了小儿止咳糖浆", c),
    ents(("咳嗽", "症状"), ("痰", "症状"), ("小儿止咳糖浆", "具体的药物名称")),
    c,
)
c = ["医学检查检验", "症状"]
add(
    "IMCS-V2-NER",
    imcs_ner_prompt("可以先查个血常规看看有没有感染", c),
    ents(("血常规", "医学检查检验"), ("感染", "症状")),
    c,
)
c = ["症状"]
add(
    "IMCS-V2-NER",
    imcs_ner_prompt("好的谢谢医生", c),
    [],
    c,
    target="上述句子中的实体包含：\n症状实体：",
)
c = ["医疗操作", "药物类别"]
add(
    "IMCS-V2-NER",
    imcs_ner_prompt("建议做个雾化，再吃点抗生素", c),
    ents(("雾化", "医疗操作"), ("抗生素", "药物类别")),
    c,
)


# --- IMCS-V2-DAC ---
def dac_prompt(text: str, options: list[str]) -> str:
    return f"判断下面问诊句子的意图：\n{text}\n选项：{'，'.join(options)}\n答："


c = ["关于症状的询问", "关于病因的回答", "给出诊断", "关于注意事项的提问"]
add("IMCS-V2-DAC", dac_prompt("孩子发烧几天了？", c), "关于症状的询问", c)
c = ["关于用药建议的解答", "给出诊断", "关于症状的回答"]
add("IMCS-V2-DAC", dac_prompt("考虑是急性胃肠炎。", c), "给出诊断", c)
c = ["关于个人基本信息的询问", "关于就医建议的解答"]
add("IMCS-V2-DAC", dac_prompt("好的", c), "非上述类型", c)
c = ["关于用药建议的提问", "关于病因的询问", "关于症状的回答"]
add("IMCS-V2-DAC", dac_prompt("这个药一天吃几次？", c), "关于用药建议的提问", c)


# --- IMCS-V2-SR ---
def sr_prompt(history: str, current: str) -> str:
    return (
        f"找出当前对话中的症状，并判断阴阳性：\n对话历史：\n{history}\n当前对话：\n{current}\n"
        f"选项：{'，'.join(SR_OPTIONS)}\n答："
    )


add(
    "IMCS-V2-SR",
    sr_prompt("医生：孩子现在什么情况？", "患者：孩子有点流鼻涕，不发烧"),
    attrs(("流鼻涕", "患有该症状"), ("发烧", "没有患有该症状")),
    SR_OPTIONS,
)
add(
    "IMCS-V2-SR",
    sr_prompt("患者：孩子肚子疼", "医生：有没有呕吐？"),
    attrs(("呕吐", "无法根据上下文确定病人是否患有该症状")),
    SR_OPTIONS,
)
add(
    "IMCS-V2-SR",
    sr_prompt("医生：现在还拉肚子吗？", "患者：拉肚子好多了，就是还有点腹痛"),
    attrs(("拉肚子", "患有该症状"), ("腹痛", "患有该症状")),
    SR_OPTIONS,
)
add("IMCS-V2-SR", sr_prompt("患者：吃了药好多了", "医生：好的，按时吃药"), [], SR_OPTIONS)


def sample_files() -> dict[str, str]:
    """File name -> text of the embedded sample."""
    structured: dict[str, list[dict[str, Any]]] = {}
    lines = []
    for record in RECORDS:
        row = {k: v for k, v in record.items() if k != "_answer"}
        structured.setdefault(row["task_dataset"], []).append(
            {"sample_id": row["sample_id"], "answer": record["_answer"]}
        )
        lines.append(json.dumps(row, ensure_ascii=False))
    return {
        "dev.json": "\n".join(lines) + "\n",
        "dev_structured.json": json.dumps(structured, ensure_ascii=False, indent=2) + "\n",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description="write the embedded PromptCBLUE sample")
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder (default {OUT})")
    parser.add_argument("--check", action="store_true", help="only compare with --out")
    args = parser.parse_args()
    files = sample_files()
    if args.check:
        stale = [
            n
            for n, t in files.items()
            if not (args.out / n).is_file() or (args.out / n).read_text(encoding="utf-8") != t
        ]
        print("sample is up to date" if not stale else f"stale: {', '.join(stale)}")
        return 1 if stale else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (args.out / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(RECORDS)} records for 16 tasks to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
