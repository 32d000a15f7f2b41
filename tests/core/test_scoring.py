"""core.scoring on a bound task whose components are small and known: parse and check, resolve,
status and family counts, scores with their CIs, and the rows of samples.jsonl."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from benchreg.core import scoring
from benchreg.core.accuracy import Accuracy
from benchreg.core.errors import BenchregError, ParseError
from benchreg.core.index_answer import IndexInto
from benchreg.core.metric import MeanMetric, Metric
from benchreg.core.spec import MetricRef
from benchreg.core.stats import bootstrap_totals_ci, wilson_ci
from benchreg.core.task import Bound, BoundMetric, Task, load_task
from benchreg.core.types import Checked, Dataset, Degraded, Prediction, Sample, Status

OPTIONS = ("a", "b", "c")


def parse_digit(text: str, sample: Sample) -> Any:
    """`"2"` -> 2; `"~2"` -> 2 read by a fallback; anything else is unparseable."""
    if text.startswith("~"):
        return Degraded(int(text[1:]), "read after a tilde")
    if not text.strip().isdigit():
        raise ParseError(f"not a number: {text!r}")
    return int(text)


def samples(n: int = 6) -> list[Sample]:
    return [Sample(f"s{i}", {"options": list(OPTIONS)}, i % 3, {"row": i}) for i in range(n)]


def bound_accuracy(**ref: Any) -> BoundMetric:
    return BoundMetric(
        MetricRef(name="accuracy", **{"primary": True, **ref}),
        Accuracy(),
        (ref.get("label") or "accuracy",),
    )


@pytest.fixture(scope="module")
def base_task() -> Task:
    return load_task("molp2s/gap")


def make_task(base: Task, **over: Any) -> Task:
    fields: dict[str, Any] = {
        "parser": Bound("digits", parse_digit, {}, 2),
        "answer_schema": Bound("options", IndexInto("options", "option"), {}, 0),
        "metrics": (bound_accuracy(),),
        "resolver": None,
        "counts": None,
    }
    fields.update(over)
    return dataclasses.replace(base, **fields)


# --- parse_and_check ----------------------------------------------------------------------------


def test_text_is_parsed_then_checked_in_place(base_task: Task) -> None:
    task = make_task(base_task)
    items = samples(6)
    preds = [
        Prediction("s0", raw_text="0"),  # parsed, in range, right
        Prediction("s1", raw_text="no idea"),  # unparseable
        Prediction("s2", raw_text="7"),  # parsed, out of range
        Prediction("s3", raw_text="~0"),  # read by a fallback
        Prediction("s4", answer=True),  # structured, a bool is no index
        Prediction("s5", answer=1),  # structured, in range
    ]
    scoring.parse_and_check(task, items, preds)
    assert [p.status for p in preds] == [
        Status.OK,
        Status.INVALID,
        Status.OUT_OF_RANGE,
        Status.OK,
        Status.INVALID,
        Status.OK,
    ]
    assert preds[0].answer == 0
    assert preds[1].detail is not None and preds[1].detail.startswith("unparseable: ")
    assert preds[1].answer is None
    assert preds[2].answer == 7 and preds[2].detail == "option 7 outside 0..2"
    assert preds[3].answer == 0 and preds[3].degraded == "read after a tilde"
    assert preds[4].detail == "option must be an int, got True"
    assert all(p.degraded is None for i, p in enumerate(preds) if i != 3)


def test_statuses_set_by_the_system_are_left_alone(base_task: Task) -> None:
    task = make_task(base_task)
    preds = [
        Prediction.missing("s0"),
        Prediction("s1", status=Status.ERROR, raw_text="HTTP 500", detail="server"),
        Prediction("s2", status=Status.INVALID, answer=2, detail="flagged"),
    ]
    scoring.parse_and_check(task, samples(3), preds)
    assert [p.status for p in preds] == [Status.MISSING, Status.ERROR, Status.INVALID]
    assert preds[1].answer is None and preds[1].detail == "server"
    assert preds[2].detail == "flagged"


def test_text_without_a_parser_is_invalid(base_task: Task) -> None:
    task = make_task(base_task, parser=None)
    preds = [Prediction("s0", raw_text="0"), Prediction("s1", answer=1)]
    scoring.parse_and_check(task, samples(2), preds)
    assert preds[0].status is Status.INVALID and "no parser" in str(preds[0].detail)
    assert preds[1].status is Status.OK


def test_a_schema_may_flag_an_answer_degraded(base_task: Task) -> None:
    class Lenient:
        def check(self, answer: Any, sample: Sample) -> Checked:
            return Checked(int(answer), degraded="coerced")

    task = make_task(base_task, answer_schema=Bound("lenient", Lenient(), {}, 0))
    preds = [Prediction("s0", answer="1")]
    scoring.parse_and_check(task, samples(1), preds)
    assert preds[0].answer == 1 and preds[0].degraded == "coerced"


def test_length_mismatch_is_not_silently_ignored(base_task: Task) -> None:
    with pytest.raises(ValueError):
        scoring.parse_and_check(make_task(base_task), samples(2), [Prediction("s0", answer=0)])


# --- resolve ----------------------------------------------------------------------------------


def test_resolver_runs_on_scored_answers_only(base_task: Task) -> None:
    built: list[Any] = []

    def factory(dataset: Dataset, *, tag: str) -> Any:
        built.append(dataset)
        return lambda sample, pred: f"{tag}:{sample.id}:{pred.answer}"

    task = make_task(base_task, resolver=Bound("tagged", factory, {"tag": "r"}, 1))
    dataset = Dataset(samples(3), [])
    preds = [
        Prediction("s0", answer=0),
        Prediction("s1", answer=5, status=Status.OUT_OF_RANGE),
        Prediction.missing("s2"),
    ]
    scoring.resolve(task, dataset, dataset.samples, preds)
    assert built == [dataset]  # built once per run
    assert [p.resolved for p in preds] == ["r:s0:0", "r:s1:5", None]


def test_no_resolver_changes_nothing(base_task: Task) -> None:
    preds = [Prediction("s0", answer=0)]
    scoring.resolve(make_task(base_task), Dataset(samples(1), []), samples(1), preds)
    assert preds[0].resolved is None


# --- counts -----------------------------------------------------------------------------------


def test_status_counts_list_every_status_and_sum_to_n() -> None:
    preds = [
        Prediction("a"),
        Prediction("b"),
        Prediction.missing("c"),
        Prediction("d", status=Status.ERROR),
    ]
    counts = scoring.status_counts(preds)
    assert list(counts) == [s.value for s in Status]
    assert counts == {"ok": 2, "missing": 1, "invalid": 0, "out_of_range": 0, "error": 1}
    assert sum(counts.values()) == len(preds)
    assert scoring.status_counts([]) == dict.fromkeys((s.value for s in Status), 0)


def count_long(
    items: Sequence[Sample], preds: Sequence[Prediction], *, longer_than: int
) -> dict[str, int]:
    return {"long_ids": sum(len(s.id) > longer_than for s in items), "n": len(preds)}


def test_task_counts_pass_the_entry_params(base_task: Task) -> None:
    items = [*samples(2), Sample("s-long-id", {"options": list(OPTIONS)}, 0)]
    preds = [Prediction(s.id) for s in items]
    task = make_task(base_task, counts=Bound("long", count_long, {"longer_than": 3}, 2))
    assert scoring.task_counts(task, items, preds) == {"long_ids": 1, "n": 3}
    assert scoring.task_counts(make_task(base_task), items, preds) == {}


def test_task_counts_may_not_redefine_a_status(base_task: Task) -> None:
    def clashing(items: Sequence[Sample], preds: Sequence[Prediction]) -> dict[str, int]:
        return {"missing": 0, "hits": 1}

    task = make_task(base_task, counts=Bound("clash", clashing, {}, 2))
    with pytest.raises(ValueError, match=r"'clash' redefines status counts \['missing'\]"):
        scoring.task_counts(task, samples(1), [Prediction("s0")])


# --- score ------------------------------------------------------------------------------------


def scored(task: Task, answers: Sequence[int | None]) -> tuple[list[Sample], list[Prediction]]:
    items = samples(len(answers))
    preds = [
        Prediction.missing(s.id) if a is None else Prediction(s.id, answer=a)
        for s, a in zip(items, answers, strict=True)
    ]
    scoring.parse_and_check(task, items, preds)
    return items, preds


def test_accuracy_with_a_wilson_interval(base_task: Task) -> None:
    task = make_task(base_task)
    answers = [0, 1, 0, None, 1, 2, 0, 1]  # gold: 0 1 2 0 1 2 0 1 -> 6 hits of 8
    items, preds = scored(task, answers)
    result = scoring.score(task, items, preds, n_boot=50, progress=False)
    value = result.values["accuracy"]
    assert result.primary == "accuracy"
    assert value.value == pytest.approx(6 / 8)
    assert (value.n, value.denominator) == (8, 8)
    assert value.ci_method == "wilson"
    assert value.ci95 == pytest.approx(wilson_ci(6, 8))
    assert result.per_sample["accuracy"].tolist() == [1, 1, 0, 0, 1, 1, 1, 1]


def test_ci_rules_primary_auto_none_and_bootstrap(base_task: Task) -> None:
    metrics = (
        bound_accuracy(),
        bound_accuracy(primary=False, label="acc_plain"),  # not primary, auto: a CI too
        bound_accuracy(primary=False, label="acc_none", ci="none"),
        bound_accuracy(primary=False, label="acc_boot", ci="bootstrap"),
    )
    task = make_task(base_task, metrics=metrics)
    items, preds = scored(task, [0, 1, 0, 0, 1, 2, 0, 2])
    result = scoring.score(task, items, preds, n_boot=50, seed=3, progress=False)
    assert result.values["accuracy"].ci_method == "wilson"
    assert result.values["acc_plain"].ci_method == "wilson"  # every metric carries a CI
    assert result.values["acc_plain"].ci95 == result.values["accuracy"].ci95
    assert result.values["acc_none"].ci95 is None
    boot = result.values["acc_boot"]
    assert boot.ci_method == "bootstrap(50)"
    stats = np.asarray(Accuracy().stats(items, preds), float)
    expected = bootstrap_totals_ci(stats, Accuracy().totals, Accuracy().reduce, n_boot=50, seed=3)[
        0
    ]
    assert boot.ci95 == pytest.approx(expected)
    assert [v.value for v in result.values.values()] == [pytest.approx(6 / 8)] * 4


def test_no_bootstrap_asked_means_no_bootstrap_ci(base_task: Task) -> None:
    task = make_task(base_task, metrics=(bound_accuracy(ci="bootstrap"),))
    items, preds = scored(task, [0, 1])
    result = scoring.score(task, items, preds, n_boot=0, progress=False)
    assert result.values["accuracy"].ci95 is None


class Totals(Metric):
    """Two values from column totals of (hit, answered) rows: no per-sample scores."""

    outputs = ("hit_share", "answered_share")
    primary_output = "hit_share"

    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        return np.array(
            [
                [float(p.ok and p.answer == s.gold), float(p.ok)]
                for s, p in zip(samples, predictions, strict=True)
            ]
        ).reshape(len(samples), 2)

    def reduce(self, totals: np.ndarray, n: int) -> np.ndarray:
        return totals / max(n, 1)

    def support(self, stats: np.ndarray, predictions: Sequence[Prediction]) -> tuple[int, int]:
        return int(stats[:, 1].sum()), len(stats)

    def detail(self, stats: np.ndarray) -> dict[str, Any]:
        return {"rows": len(stats)}


def test_a_multi_value_metric_without_sample_scores(base_task: Task) -> None:
    bound = BoundMetric(
        MetricRef(name="totals", primary=True), Totals(), ("hit_share", "answered_share")
    )
    task = make_task(base_task, metrics=(bound,))
    items, preds = scored(task, [0, None, 2, 1])  # gold 0 1 2 0: 2 hits, 3 answered
    result = scoring.score(task, items, preds, n_boot=40, progress=False)
    assert result.primary == "hit_share"
    hit, answered = result.values["hit_share"], result.values["answered_share"]
    assert (hit.value, answered.value) == (pytest.approx(0.5), pytest.approx(0.75))
    assert (hit.n, hit.denominator) == (3, 4)
    assert hit.detail == {"rows": 4}
    assert hit.ci_method == answered.ci_method == "bootstrap(40)"
    assert result.per_sample == {}


def test_wilson_asked_without_sample_scores_is_an_error(base_task: Task) -> None:
    bound = BoundMetric(
        MetricRef(name="totals", primary=True, ci="wilson"), Totals(), Totals.outputs
    )
    task = make_task(base_task, metrics=(bound,))
    items, preds = scored(task, [0])
    with pytest.raises(BenchregError, match="no 0/1 per-sample scores for a Wilson CI"):
        scoring.score(task, items, preds, progress=False)


class Counting(MeanMetric):
    outputs = ("mean_index",)

    def __init__(self) -> None:
        self.calls: list[int] = []

    def stats(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> np.ndarray:
        self.calls.append(len(samples))
        return super().stats(samples, predictions)

    def score(self, sample: Sample, prediction: Prediction) -> Sequence[float]:
        return (float(prediction.answer or 0),)


def test_stats_are_computed_in_chunks(base_task: Task, monkeypatch: pytest.MonkeyPatch) -> None:
    metric = Counting()
    task = make_task(
        base_task,
        metrics=(BoundMetric(MetricRef(name="counting", primary=True), metric, ("mean_index",)),),
    )
    answers = [i % 3 for i in range(10)]
    items, preds = scored(task, answers)
    whole = scoring.score(task, items, preds, n_boot=30, progress=False)
    monkeypatch.setattr(scoring, "STATS_CHUNK", 4)
    metric.calls.clear()
    chunked = scoring.score(task, items, preds, n_boot=30, progress=False)
    assert metric.calls == [4, 4, 2]
    assert chunked.values["mean_index"] == whole.values["mean_index"]
    assert chunked.values["mean_index"].value == pytest.approx(sum(answers) / 10)
    assert chunked.values["mean_index"].ci_method == "bootstrap(30)"  # primary, not 0/1


def test_wilson_asked_for_non_binary_scores_is_an_error(base_task: Task) -> None:
    bound = BoundMetric(
        MetricRef(name="counting", primary=True, ci="wilson"), Counting(), ("mean_index",)
    )
    task = make_task(base_task, metrics=(bound,))
    items, preds = scored(task, [2, 2, 2])
    with pytest.raises(BenchregError, match="Wilson"):
        scoring.score(task, items, preds, progress=False)


def test_label_names_the_primary(base_task: Task) -> None:
    task = make_task(base_task, metrics=(bound_accuracy(label="hit_rate"),))
    items, preds = scored(task, [0, 0])
    result = scoring.score(task, items, preds, progress=False)
    assert result.primary == "hit_rate" and set(result.values) == {"hit_rate"}


# --- sample_rows ------------------------------------------------------------------------------


def test_sample_rows_hold_what_samples_jsonl_needs(base_task: Task) -> None:
    task = make_task(base_task)
    items = samples(3)
    preds = [
        Prediction("s0", raw_text="~0", latency_s=0.5, metadata={"rule": "x"}),
        Prediction("s1", raw_text="zz"),
        Prediction.missing("s2"),
    ]
    scoring.parse_and_check(task, items, preds)
    result = scoring.score(task, items, preds, progress=False)
    rows = scoring.sample_rows(items, preds, result.per_sample, result.primary)
    assert [r["id"] for r in rows] == ["s0", "s1", "s2"]
    first, second, third = rows
    assert first == {
        "id": "s0",
        "raw_output": "~0",
        "answer": 0,
        "gold": 0,
        "status": "ok",
        "score": 1.0,
        "degraded": "read after a tilde",
        "latency_s": 0.5,
        "metadata": {"rule": "x"},
        "meta": {"row": 0},
    }
    assert second["status"] == "invalid" and second["score"] == 0.0
    assert second["detail"].startswith("unparseable")
    assert "latency_s" not in second and "degraded" not in second and "scores" not in second
    assert third["status"] == "missing" and third["raw_output"] is None


def test_sample_rows_list_every_score_when_there_are_several() -> None:
    items = samples(2)
    preds = [Prediction("s0", answer=0), Prediction("s1", answer=0)]
    per_sample = {"a": np.array([1.0, 0.0]), "b": np.array([0.25, 0.5])}
    rows = scoring.sample_rows(items, preds, per_sample, "b")
    assert [r["score"] for r in rows] == [0.25, 0.5]
    assert rows[0]["scores"] == {"a": 1.0, "b": 0.25}
    assert scoring.sample_rows(items, preds, {}, "a")[0]["score"] is None
