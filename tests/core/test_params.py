"""core.params: component params checked by name, by (strict) type and, with ``complete``, for
presence; loaders declare theirs with ``loader_params``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.params import PARAMS_ATTR, check_params, loader_params
from benchreg.core.types import Dataset, LoadContext


def metric_like(k: int, gate: str | None = None, weights: tuple[float, ...] = ()) -> None:
    """A metric factory: every param is a keyword."""


def counts_like(samples: Sequence[Any], preds: Sequence[Any], *, flag: bool = False) -> None:
    """Two positional arguments before the params (n_args=2)."""


def open_ended(ctx: Any, size: int = 1, **more: Any) -> None:
    """Takes any further keyword."""


def untyped(a, b=2):  # type: ignore[no-untyped-def]
    """No annotations: names are checked, types are not."""


def anything(x: Any = None) -> None:
    """Annotated as Any."""


class Factory:
    """A class: its __init__ (after self) is checked."""

    def __init__(self, q: float = 0.5, mode: Literal["a", "b"] = "a") -> None:
        self.q, self.mode = q, mode


@loader_params(modality=str, strict=bool)
def a_loader(ctx: LoadContext) -> Dataset:
    return Dataset([], [])


def where(key: str) -> str:
    return f"entry.yaml:{len(key)}"


# --- names --------------------------------------------------------------------------------------


def test_known_params_of_the_right_type_pass() -> None:
    check_params("metric 'm'", metric_like, {"k": 3, "gate": ">= 0.5", "weights": [0.5, 1]})
    check_params("counts 'c'", counts_like, {"flag": True}, 2)
    check_params("loader 'l'", a_loader, {"modality": "pdf", "strict": False})
    check_params("metric 'f'", Factory, {"q": 0.1, "mode": "b"})


def test_an_unknown_param_is_one_located_error_listing_the_known() -> None:
    with pytest.raises(BenchregError) as info:
        check_params("metric 'm'", metric_like, {"k": 1, "kk": 2}, locate=where)
    error = info.value
    assert error.what == "metric 'm': unknown param 'kk'"
    assert error.where == "entry.yaml:2"
    assert error.fix == "it takes: gate, k, weights"


def test_positional_arguments_are_not_params() -> None:
    with pytest.raises(BenchregError, match="unknown param 'samples'"):
        check_params("counts 'c'", counts_like, {"samples": []}, 2)
    # without n_args the first positional ones are taken for params
    check_params("counts 'c'", counts_like, {"samples": [], "preds": []}, 0)


def test_a_component_without_params_says_so() -> None:
    def nothing() -> None: ...

    with pytest.raises(BenchregError) as info:
        check_params("parser 'p'", nothing, {"x": 1})
    assert info.value.fix == "it takes: no params"


def test_kwargs_accept_any_further_name_but_typed_params_stay_checked() -> None:
    check_params("baseline 'b'", open_ended, {"whatever": object(), "size": 3}, 1)
    with pytest.raises(BenchregError, match="size='3'"):
        check_params("baseline 'b'", open_ended, {"size": "3"}, 1)


def test_a_class_is_checked_by_its_init() -> None:
    with pytest.raises(BenchregError, match="unknown param 'self'"):
        check_params("metric 'f'", Factory, {"self": 1})
    with pytest.raises(BenchregError, match="mode='c'"):
        check_params("metric 'f'", Factory, {"mode": "c"})


def test_a_callable_without_a_signature_is_not_checked() -> None:
    check_params("odd", dict, {"anything": 1})


# --- types: strict scalars, lax containers -----------------------------------------------------


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"k": "1"}, "k='1': Input should be a valid integer"),
        ({"k": 1.5}, "k=1.5"),
        ({"k": True}, "k=True"),
        ({"gate": 0.9}, "gate=0.9"),
        ({"weights": ["x"]}, "weights=['x']"),
        ({"weights": "0.5"}, "weights='0.5'"),
    ],
)
def test_wrong_types_are_errors(params: dict[str, Any], expected: str) -> None:
    full = {"k": 1, **params}
    with pytest.raises(BenchregError) as info:
        check_params("metric 'm'", metric_like, full, locate=where)
    assert expected in info.value.what
    assert info.value.fix is not None and info.value.fix.startswith("write a value of type ")
    assert info.value.where == where(next(iter(params)))


def test_scalars_are_strict_for_bools_and_numbers() -> None:
    with pytest.raises(BenchregError, match="strict='no'"):
        check_params("loader 'l'", a_loader, {"strict": "no"})
    with pytest.raises(BenchregError, match="q=True"):
        check_params("metric 'f'", Factory, {"q": True})  # true is not a number
    check_params("metric 'f'", Factory, {"q": 1})  # an int is a number


def test_none_passes_an_optional_and_lists_pass_tuples() -> None:
    check_params("metric 'm'", metric_like, {"k": 1, "gate": None, "weights": [1.0, 2.0]})


def test_untyped_and_any_params_are_checked_by_name_only() -> None:
    check_params("x", untyped, {"a": "anything", "b": [1]})
    check_params("x", anything, {"x": {"nested": [1]}})
    with pytest.raises(BenchregError, match="unknown param 'c'"):
        check_params("x", untyped, {"c": 1})


# --- presence ---------------------------------------------------------------------------------


def test_complete_reports_a_missing_required_param() -> None:
    check_params("metric 'm'", metric_like, {})  # not complete: model.params may add it
    with pytest.raises(BenchregError) as info:
        check_params("metric 'm'", metric_like, {"gate": None}, locate=where, complete=True)
    error = info.value
    assert error.what == "metric 'm': missing param 'k'"
    assert error.where == "entry.yaml:1"
    assert error.fix is not None and "gate, k, weights" in error.fix


def test_complete_counts_only_params_after_the_positional_ones() -> None:
    check_params("counts 'c'", counts_like, {}, 2, complete=True)
    with pytest.raises(BenchregError, match="missing param 'samples'"):
        check_params("counts 'c'", counts_like, {}, 0, complete=True)


def test_missing_is_reported_before_a_bad_type() -> None:
    with pytest.raises(BenchregError, match="missing param 'k'"):
        check_params("metric 'm'", metric_like, {"gate": 1}, complete=True)


# --- loader_params ----------------------------------------------------------------------------


def test_loader_params_declares_the_fields() -> None:
    assert getattr(a_loader, PARAMS_ATTR) == {"modality": str, "strict": bool}


def test_loader_params_checks_names_and_types_not_presence() -> None:
    check_params("loader 'l'", a_loader, {}, complete=True)  # declared params are optional
    with pytest.raises(BenchregError) as info:
        check_params("loader 'l'", a_loader, {"modalty": "pdf"})
    assert info.value.fix == "it takes: modality, strict"
    with pytest.raises(BenchregError, match="modality=3"):
        check_params("loader 'l'", a_loader, {"modality": 3})


def test_loader_params_may_declare_a_literal() -> None:
    @loader_params(void_entries=Literal["drop", "error"])
    def loader(ctx: LoadContext) -> Dataset:
        return Dataset([], [])

    check_params("loader 'v'", loader, {"void_entries": "drop"})
    with pytest.raises(BenchregError, match="void_entries='keep'"):
        check_params("loader 'v'", loader, {"void_entries": "keep"})
