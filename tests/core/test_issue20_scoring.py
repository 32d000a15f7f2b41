"""Core pieces of issue 20: the one reasoning helper (every family's parser strips reasoning),
the probability metrics (log loss, Brier, ECE with its reliability bins), majority vote, and
the answer schemas' JSON Schema / choices."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchreg import load_task
from benchreg.core.index_answer import IndexInto
from benchreg.core.scoring import majority_vote, probability_scores
from benchreg.core.text import split_reasoning, strip_reasoning
from benchreg.core.types import Prediction, Sample, Status


@pytest.mark.parametrize(
    ("text", "answer", "reasoning", "unclosed"),
    [
        ("<think>why</think>\n病因分析", "病因分析", "why", False),
        ("why</think> 2", "2", "why", False),  # the opening tag was in the prompt
        ("<think>never closed", "", "never closed", True),
        ("plain", "plain", None, False),
        ("<reasoning>a</reasoning>{}", "{}", "a", False),
    ],
)
def test_split_reasoning(text: str, answer: str, reasoning: str | None, unclosed: bool) -> None:
    split = split_reasoning(text)
    assert (split.answer, split.reasoning, split.unclosed) == (answer, reasoning, unclosed)
    assert strip_reasoning(text) == answer


@pytest.mark.parametrize(
    ("task", "reply", "expected"),
    [
        ("cblue/KUAKE-QIC", "<think>它问病因。</think>\n病因分析", "病因分析"),
        (
            "molp2s/gap",
            '<think>{"selected_candidate_index": 9}</think>{"selected_candidate_index": 1}',
            1,
        ),
        ("reaction_mc/single_varying", "<think>maybe 3</think>2", 2),
        ("retrieval/conversation", '<think>x</think>{"results": []}', {"results": []}),
    ],
)
def test_every_family_reads_the_answer_after_the_reasoning(
    task: str, reply: str, expected: object
) -> None:
    parser = load_task(task).parser
    sample = Sample("s", {"answer_choices": ["病因分析", "治疗方案"]}, None)
    parsed = parser(reply, sample)
    assert getattr(parsed, "answer", parsed) == expected


def test_a_cblue_reply_without_reasoning_is_read_exactly_as_given() -> None:
    parser = load_task("cblue/KUAKE-QIC").parser
    sample = Sample("s", {"answer_choices": ["病因分析"]}, None)
    assert parser("  病因分析\n", sample) == "病因分析"


def _pred(probs: list[float], status: Status = Status.OK) -> Prediction:
    return Prediction(
        "x", answer=int(np.argmax(probs)), status=status, metadata={"option_probs": probs}
    )


def test_probability_metrics_by_hand() -> None:
    samples = [Sample(str(i), {}, gold) for i, gold in enumerate([0, 1, [1, 2], 0])]
    preds = [
        _pred([0.7, 0.2, 0.1]),
        _pred([0.5, 0.25, 0.25]),
        _pred([0.2, 0.3, 0.5]),
        # no probabilities: scored as the worst wrong answer (issue 37, invalid never beats
        # wrong): all mass on a wrong option
        Prediction("3", status=Status.ERROR),
    ]
    scores = probability_scores(samples, preds, n_boot=0)
    losses = [-math.log(0.7), -math.log(0.25), -math.log(0.8), -math.log(1e-12)]
    assert scores["log_loss"].value == pytest.approx(np.mean(losses))
    assert scores["log_loss"].n == 4 and scores["log_loss"].denominator == 4
    assert scores["log_loss"].detail["scored_as_worst"] == 1
    briers = [
        0.3**2 + 0.2**2 + 0.1**2,
        0.5**2 + 0.75**2 + 0.25**2,
        0.2**2 + 0.2**2 + 0.0**2,  # ties: target 1/2 on each correct option
        1.0 + 1.0,  # all mass on a wrong option
    ]
    assert scores["brier"].value == pytest.approx(np.mean(briers))
    # top choices: 0.7 right, 0.5 wrong, 0.5 right, 1.0 wrong -> bins (0.6, 0.7], (0.4, 0.5]
    # and (0.9, 1.0]
    ece = scores["ece"]
    assert ece.value == pytest.approx(0.25 * abs(1 - 0.7) + 0.5 * abs(0.5 - 0.5) + 0.25 * 1.0)
    filled = [b for b in ece.detail["reliability"] if b["n"]]
    assert [(b["lo"], b["n"]) for b in filled] == [(0.4, 2), (0.6, 1), (0.9, 1)]
    assert probability_scores(samples, [Prediction(s.id) for s in samples]) == {}


def test_probabilities_that_do_not_sum_to_one_are_a_bug() -> None:
    with pytest.raises(ValueError, match="sum to"):
        probability_scores([Sample("a", {}, 0)], [_pred([0.5, 0.4])], n_boot=0)


def test_majority_vote_takes_the_most_common_valid_answer() -> None:
    runs = [
        [Prediction("a", answer=1), Prediction("b", answer=0, status=Status.INVALID)],
        [Prediction("a", answer=2), Prediction("b", answer=3, status=Status.INVALID)],
        [Prediction("a", answer=2), Prediction("b", answer=4, status=Status.INVALID)],
    ]
    vote = majority_vote(runs)
    assert vote[0].answer == 2 and vote[1] is runs[0][1]  # no valid answer: repeat 0's
    tie = majority_vote([[Prediction("a", answer=5)], [Prediction("a", answer=6)]])
    assert tie[0].answer == 5  # ties: the earliest repeat


def test_an_index_states_its_schema_and_choices() -> None:
    schema = IndexInto("options", "option index", "answer")
    sample = Sample("s", {"options": ["x"] * 12}, 0)
    assert schema.json_schema(sample)["properties"]["answer"]["enum"] == list(range(12))
    choices = schema.choices(sample)
    assert choices.prefix == '{"answer":' and choices.suffix == "}"
    assert choices.texts[11] == "11" and choices.answers[11] == 11
    bare = IndexInto("options")
    assert bare.json_schema(sample) == {"type": "integer", "enum": list(range(12))}
    assert bare.choices(sample).prefix == ""
