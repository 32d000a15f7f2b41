"""Property (issue 37, item 2): for every registered metric, an invalid, missing or failed answer
never scores above a wrong one planted at the same sample, whatever the other samples hold.

Each metric of the registry has a case below: small sample sets of its family, the other
answers drawn freely (right, wrong, or not answers at all), and at one sample a wrong answer of
the kind the metric can judge:
- accuracy: any index but the gold one (equal: both a miss);
- cblue_label_prf (macro, weighted): a label no other answer names, or the label a planted
  number or bool reads as (the official scorer's class for it; equal in both cases);
- cblue_micro_prf: any gold items plus at most one item that matches nothing (an invalid answer
  is one item that matches nothing; more wrong items score lower still, there is no worst);
- cblue_reply_rouge / cblue_report_rouge: any text / any sections (invalid: ROUGE 0);
- ranking metrics: any ranking that hits no gold item (recall, MRR, nDCG: 0; clean@k and false
  recall: the worst value whatever the ranking);
- reaction_mc_scores: any option, the worst one included (invalid: 0).
`context_at_k` and `latency_quantile` are no scores of the answer (invalid_vs_wrong.DESCRIPTIVE).
A metric registered without a case here fails `test_every_registered_metric_has_a_case`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchreg.core import registry
from benchreg.core.metric import Metric
from benchreg.core.ranking.clean_at_k import CleanAtK
from benchreg.core.ranking.false_recall import FalseRecall
from benchreg.core.ranking.mrr import MRR
from benchreg.core.ranking.ndcg_at_k import NDCGAtK
from benchreg.core.ranking.recall_at_k import RecallAtK
from benchreg.core.ranking.resolution import ResolvedRanking
from benchreg.core.types import Prediction, Sample, Status
from benchreg.families.cblue.metrics import LabelPRF, MicroPRF, ReplyRouge, ReportRouge
from benchreg.families.reaction_mc.metrics import ReactionScores

from .invalid_vs_wrong import DESCRIPTIVE, NOT_ANSWERS, embedded, not_better, values

# (metric, samples, predictions with an invalid answer at one sample, the same with a wrong one)
Case = tuple[Metric, list[Sample], list[Prediction], list[Prediction]]
statuses = st.sampled_from(NOT_ANSWERS)
junk = st.none() | st.lists(st.integers(), max_size=2) | st.just({"label": "x"}) | st.just("x")


def planted(draw: st.DrawFn, answers: list[Prediction], wrong: Prediction) -> tuple[list, list]:
    """(answers with a not-answer at wrong's sample, answers with ``wrong`` there)."""
    position = next(i for i, p in enumerate(answers) if p.sample_id == wrong.sample_id)
    invalid = Prediction(wrong.sample_id, answer=draw(junk), status=draw(statuses))
    return (
        [invalid if i == position else p for i, p in enumerate(answers)],
        [wrong if i == position else p for i, p in enumerate(answers)],
    )


def other(draw: st.DrawFn, sample_id: str, answer: st.SearchStrategy[Any]) -> Prediction:
    """Another sample's answer: an answer, or no answer at all."""
    if draw(st.booleans()):
        return Prediction(sample_id, answer=draw(answer))
    return Prediction(sample_id, answer=draw(junk | st.integers(0, 3)), status=draw(statuses))


@st.composite
def accuracy(draw: st.DrawFn) -> Case:
    golds = draw(st.lists(st.integers(0, 3), min_size=1, max_size=6))
    samples = [Sample(str(i), {}, g) for i, g in enumerate(golds)]
    answers = [other(draw, s.id, st.integers(0, 3)) for s in samples]
    at = draw(st.sampled_from(samples))
    wrong = Prediction(at.id, answer=draw(st.integers(0, 3).filter(lambda a: a != at.gold)))
    return (registry.metrics.get("accuracy")(), samples, *planted(draw, answers, wrong))


LABELS = ["非上述类型", "疾病", "症状(患者感受)", "药物"]


@st.composite
def cblue_labels(draw: st.DrawFn) -> Case:
    golds = draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=8))
    samples = [Sample(str(i), {"task_dataset": "CHIP-CTC"}, g) for i, g in enumerate(golds)]
    answers = [other(draw, s.id, st.sampled_from(["", "other", *LABELS])) for s in samples]
    at = draw(st.sampled_from(samples))
    metric = LabelPRF(average=draw(st.sampled_from(["macro", "weighted"])))
    number = draw(st.none() | st.integers(-3, 3) | st.booleans() | st.just(1.5))
    if number is None:  # a wrong label outside every class
        invalid, wrong = planted(draw, answers, Prediction(at.id, answer="WRONG-unique"))
        return metric, samples, invalid, wrong
    # a number or bool reads as its text, as in the official scorer: equal to that wrong label
    text = Prediction(at.id, answer=str(number), status=Status.OUT_OF_RANGE)
    invalid, wrong = planted(draw, answers, text)
    index = next(i for i, p in enumerate(invalid) if p.sample_id == at.id)
    invalid[index] = Prediction(at.id, answer=number, status=Status.INVALID)
    return metric, samples, invalid, wrong


ITEMS = [{"entity": e, "type": "疾病"} for e in ("甲", "乙", "丙")]


@st.composite
def cblue_items(draw: st.DrawFn) -> Case:
    items = st.lists(st.sampled_from(ITEMS), max_size=3)
    golds = draw(st.lists(items, min_size=1, max_size=5))
    samples = [Sample(str(i), {"task_dataset": "CMeEE-V2"}, g) for i, g in enumerate(golds)]
    unmatched = {"entity": "WRONG", "type": "疾病"}
    answers = [other(draw, s.id, st.lists(st.sampled_from([*ITEMS, unmatched]))) for s in samples]
    at = draw(st.sampled_from(samples))
    kept = draw(st.lists(st.sampled_from(at.gold), max_size=3)) if at.gold else []
    wrong = [*kept, *([unmatched] if draw(st.booleans()) else [])]
    return (MicroPRF(), samples, *planted(draw, answers, Prediction(at.id, answer=wrong)))


texts = st.text(alphabet="发热咳嗽无。，abc ", max_size=8)
SECTIONS = ["主诉", "现病史", "诊断"]


@st.composite
def cblue_reply(draw: st.DrawFn) -> Case:
    samples = [Sample(str(i), {}, g) for i, g in enumerate(draw(st.lists(texts, min_size=1)))]
    answers = [other(draw, s.id, texts) for s in samples]
    wrong = Prediction(draw(st.sampled_from(samples)).id, answer=draw(texts))
    return (ReplyRouge(), samples, *planted(draw, answers, wrong))


@st.composite
def cblue_report(draw: st.DrawFn) -> Case:
    reports = st.dictionaries(st.sampled_from(SECTIONS), texts, min_size=1)
    samples = [Sample(str(i), {}, g) for i, g in enumerate(draw(st.lists(reports, min_size=1)))]
    answers = [other(draw, s.id, reports) for s in samples]
    wrong = Prediction(draw(st.sampled_from(samples)).id, answer=draw(reports))
    return (ReportRouge(), samples, *planted(draw, answers, wrong))


def rankings(n_gold: int, *, hits: bool) -> st.SearchStrategy[ResolvedRanking]:
    ranks = st.integers(0, 12) if hits else st.just(0)
    flags = st.dictionaries(st.sampled_from(["future"]), st.lists(st.integers(1, 12), max_size=2))
    return st.builds(
        ResolvedRanking,
        n_results=st.integers(0, 12),
        first_hit=st.tuples(*[ranks] * n_gold),
        flagged=flags,
        unknown=flags,
        max_score=st.none() | st.floats(0, 1),
        n_unscored=st.integers(0, 2),
    )


RANKING: dict[str, Callable[[st.DrawFn], Metric]] = {
    "recall_at_k": lambda draw: RecallAtK(k=draw(st.integers(1, 10))),
    "mrr": lambda draw: MRR(k=draw(st.none() | st.integers(1, 10))),
    "ndcg_at_k": lambda draw: NDCGAtK(k=draw(st.integers(1, 10))),
    "clean_at_k": lambda draw: CleanAtK(flag="future", when="as_of", k=draw(st.integers(1, 10))),
    "false_recall": lambda draw: FalseRecall(strong_score=draw(st.none() | st.floats(0, 1))),
}


@st.composite
def ranking(draw: st.DrawFn, name: str) -> Case:
    golds = draw(st.lists(st.integers(0, 3), min_size=1, max_size=6))
    samples = [
        Sample(str(i), {}, [f"g{j}" for j in range(g)], meta={"as_of": "2024"})
        for i, g in enumerate(golds)
    ]
    answers = [
        Prediction(s.id, answer=["r"], resolved=draw(rankings(len(s.gold), hits=True)))
        if draw(st.booleans())
        else Prediction(s.id, status=draw(statuses))
        for s in samples
    ]
    at = draw(st.sampled_from(samples))
    wrong = Prediction(at.id, answer=["r"], resolved=draw(rankings(len(at.gold), hits=False)))
    return (RANKING[name](draw), samples, *planted(draw, answers, wrong))


REACTION, _ = embedded("reaction_mc/single_varying")


@st.composite
def reaction(draw: st.DrawFn) -> Case:
    samples = draw(st.lists(st.sampled_from(REACTION), min_size=1, max_size=4, unique_by=id))
    answers = [other(draw, s.id, st.integers(0, len(s.input["options"]) - 1)) for s in samples]
    at = draw(st.sampled_from(samples))
    option = draw(st.integers(0, len(at.input["options"]) - 1))
    metric = ReactionScores(source=draw(st.sampled_from(["formula", "stored"])))
    return (metric, samples, *planted(draw, answers, Prediction(at.id, answer=option)))


CASES: dict[str, st.SearchStrategy[Case]] = {
    "accuracy": accuracy(),
    "cblue_label_prf": cblue_labels(),
    "cblue_micro_prf": cblue_items(),
    "cblue_reply_rouge": cblue_reply(),
    "cblue_report_rouge": cblue_report(),
    "reaction_mc_scores": reaction(),
    **{name: ranking(name) for name in RANKING},
}


def test_every_registered_metric_has_a_case() -> None:
    registry.load_components()
    built_in = {  # metrics that other test modules register for themselves are not the product's
        name
        for name, metric in registry.metrics.registered().items()
        if getattr(metric, "__module__", "").startswith("benchreg.")
    }
    unknown = built_in - set(CASES) - set(DESCRIPTIVE)
    assert not unknown, f"say how an invalid answer compares with a wrong one for {unknown}"


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.parametrize("name", sorted(CASES))
def test_an_invalid_answer_never_scores_above_a_wrong_one(name: str, data: st.DataObject) -> None:
    metric, samples, invalid, wrong = data.draw(CASES[name])
    assert not not_better(values(metric, samples, invalid), values(metric, samples, wrong))
