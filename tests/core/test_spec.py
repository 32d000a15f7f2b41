"""Task spec validation: each rejection has a test."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from benchreg.core.errors import BenchregError
from benchreg.core.spec import TaskSpec
from benchreg.core.task import bind

BASE: dict[str, Any] = {
    "name": "molp2s/gap",
    "family": "molp2s",
    "description": "d",
    "loader": "molp2s",
    "answer_schema": "candidate_index",
    "metrics": [{"name": "accuracy", "primary": True}],
    "views": ["correct", "shuffled"],
    "default_view": "correct",
}


def spec(**over: Any) -> TaskSpec:
    return TaskSpec.model_validate({**BASE, **over})


def test_valid_spec_and_string_shorthand() -> None:
    s = spec()
    assert s.loader.name == "molp2s" and s.loader.params == {}
    assert s.primary_metric.name == "accuracy"


def test_unknown_top_level_key_rejected() -> None:
    with pytest.raises(ValidationError, match="extra"):
        spec(bogus=1)


def test_unknown_nested_key_rejected() -> None:
    with pytest.raises(ValidationError, match="extra"):
        spec(loader={"name": "molp2s", "parms": {}})


def test_missing_required_key_rejected() -> None:
    data = dict(BASE)
    del data["answer_schema"]
    with pytest.raises(ValidationError, match="answer_schema"):
        TaskSpec.model_validate(data)


def test_no_metric_rejected() -> None:
    with pytest.raises(ValidationError, match="at least one metric"):
        spec(metrics=[])


@pytest.mark.parametrize(
    "metrics",
    [
        [{"name": "accuracy"}],
        [{"name": "accuracy", "primary": True}, {"name": "x", "primary": True}],
    ],
)
def test_exactly_one_primary(metrics: list[dict[str, Any]]) -> None:
    with pytest.raises(ValidationError, match="exactly one metric"):
        spec(metrics=metrics)


def test_repeated_metric_output_names_rejected() -> None:
    first = {"name": "accuracy", "primary": True}
    with pytest.raises(BenchregError, match=r"metrics: .*output name\(s\) \['accuracy'\] repeat"):
        bind(spec(metrics=[first, {"name": "accuracy"}]))
    renamed = bind(spec(metrics=[first, {"name": "accuracy", "label": "b"}]))
    assert [m.names for m in renamed.metrics] == [("accuracy",), ("b",)]


def test_unknown_metric_param_is_reported_with_the_accepted_ones() -> None:
    with pytest.raises(BenchregError) as caught:
        bind(spec(metrics=[{"name": "accuracy", "primary": True, "params": {"k": 1}}]))
    assert "metrics 'accuracy': unknown param 'k'" in caught.value.message
    assert "it takes: no params" in caught.value.message


def test_default_view_must_be_a_view() -> None:
    with pytest.raises(ValidationError, match="default_view"):
        spec(default_view="counterfactual")


def test_unknown_view_is_a_user_error() -> None:
    with pytest.raises(BenchregError, match="no view 'sideways'"):
        spec().resolve_view("sideways")
    assert spec().resolve_view(None) == "correct"


def test_view_on_viewless_task_is_a_user_error() -> None:
    with pytest.raises(BenchregError, match="has no views"):
        spec(views=[], default_view=None).resolve_view("correct")


def test_unknown_component_names_are_reported() -> None:
    with pytest.raises(BenchregError, match="metrics: unknown metric 'acc'"):
        bind(spec(metrics=[{"name": "acc", "primary": True}]))


def test_spec_cannot_name_code() -> None:
    with pytest.raises(BenchregError, match="loader: unknown loader 'os:system'"):
        bind(spec(loader="os:system"))
