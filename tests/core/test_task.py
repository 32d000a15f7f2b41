"""Binding a task entry once: every component name looked up once, every param checked once,
with errors located at the entry's file:line."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.options import RunOptions
from benchreg.core.registry import Registry
from benchreg.core.run import run_task
from benchreg.core.spec import MetricRef, TaskSpec
from benchreg.core.task import Bound, BoundMetric, Task, bind, load_task

FAST = RunOptions(progress=False, n_boot=50)

MOLP2S_HEAD = """\
defaults:
  - /task/_base/molp2s@_here_
  - _self_
name: mine/t1
description: a task of my own
data: [data/gap]
"""  # 6 lines: what a test appends starts on line 7

RETRIEVAL_HEAD = """\
defaults:
  - /task/_base/retrieval@_here_
  - _self_
name: mine/t1
description: a retrieval task of my own
loader: {name: retrieval, params: {modality: pdf}}
"""  # 6 lines as well


def write_entry(folder: Path, text: str, name: str = "mine/t1") -> Path:
    path = folder / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[tuple[str, str]]]:
    """Every ``Registry.get`` call from now on, counted by (registry kind, name)."""
    registry.load_components()
    calls: Counter[tuple[str, str]] = Counter()
    original = Registry.get

    def counting_get(self: Registry[Any], name: str, *, where: str | None = None) -> Any:
        calls[(self.kind, name)] += 1
        return original(self, name, where=where)

    monkeypatch.setattr(Registry, "get", counting_get)
    yield calls


def expected_lookups(spec: TaskSpec) -> set[tuple[str, str]]:
    """The distinct (kind, name) pairs a spec names, from registry.FIELDS."""
    found = {(registry.families.kind, spec.family)}
    for field in registry.FIELDS:
        value = getattr(spec, field.field)
        if value is None:
            continue
        if field.field == "prompt":
            found.add((field.registry.kind, value.renderer))
            continue
        refs = value if isinstance(value, list) else [value]
        found.update((field.registry.kind, ref.name) for ref in refs)
    return found


# --- each name is looked up once per run --------------------------------------------------------


def test_load_task_looks_each_distinct_name_up_once(lookups: Counter[tuple[str, str]]) -> None:
    task = load_task("retrieval/pdf")
    metric_names = Counter(m.name for m in task.spec.metrics)
    # the premise: two names appear twice (with different params)
    assert metric_names["clean_at_k"] == 2
    assert metric_names["latency_quantile"] == 2

    assert set(lookups) == expected_lookups(task.spec)
    assert {key: n for key, n in lookups.items() if n != 1} == {}
    assert lookups[("metric", "clean_at_k")] == 1
    assert lookups[("metric", "latency_quantile")] == 1
    assert lookups[("family", "retrieval")] == 1
    assert ("prompt renderer", "retrieval") in lookups


def test_a_run_looks_up_nothing_but_its_system(lookups: Counter[tuple[str, str]]) -> None:
    task = load_task("retrieval/pdf")
    lookups.clear()
    result = run_task(task, view="dev", options=FAST)
    assert dict(lookups) == {(registry.systems.kind, "baseline"): 1}
    assert result.statuses["ok"] == len(result.samples) > 0
    assert set(result.metrics) == {n for m in task.metrics for n in m.names}


def test_repeated_names_bind_to_separate_metrics_with_their_own_params() -> None:
    task = load_task("retrieval/pdf")
    by_label = {m.names[0]: m for m in task.metrics}
    temporal, holder = by_label["temporal_correctness"], by_label["holder_correctness"]
    assert temporal.name == holder.name == "clean_at_k"
    assert temporal.metric is not holder.metric
    assert (temporal.params["flag"], holder.params["flag"]) == ("future", "foreign_holder")
    assert {"latency_p50", "latency_p95"} <= set(by_label)
    assert type(by_label["latency_p50"].metric) is type(by_label["latency_p95"].metric)


def test_task_holds_the_registered_components() -> None:
    task = load_task("retrieval/pdf")
    assert isinstance(task, Task)
    assert task.loader.component is registry.loaders.get("retrieval")
    assert task.loader.params == {"modality": "pdf"}
    assert task.schema is registry.answer_schemas.get("retrieval_results")
    assert task.parser is not None and task.parser.n_args == 2
    assert task.family_info is registry.families.get("retrieval")
    assert [m.name for m in task.metrics] == [m.name for m in task.spec.metrics]
    assert all(isinstance(m, BoundMetric) for m in task.metrics)
    assert task.primary.ref.primary and task.primary.primary_name == "recall@10"
    assert [v.name for v in task.validators] == ["retrieval_sets"]
    assert task.sources[-1].name == "pdf.yaml" and task.sources[0].name == "retrieval.yaml"


def test_bind_of_a_loaded_spec_gives_the_same_components() -> None:
    task = load_task("molp2s/gap")
    again = bind(task.spec, task.sources)
    assert again.loader.component is task.loader.component
    assert again.parser is not None and task.parser is not None
    assert again.parser.component is task.parser.component
    assert [m.names for m in again.metrics] == [m.names for m in task.metrics]
    assert again.metrics[0].metric is not task.metrics[0].metric  # built anew per bind


# --- errors in a user's entry: one BenchregError at file:line -----------------------------------

ERRORS: dict[str, tuple[str, str, int, list[str]]] = {
    # case: (head, appended text, line of the error, words the message must hold)
    "unknown parser": (MOLP2S_HEAD, "parser: molp2s_jsn\n", 7, ["molp2s_jsn", "molp2s_json"]),
    "unknown metric": (
        MOLP2S_HEAD,
        "metrics:\n  - {name: acuracy, primary: true}\n",
        8,
        ["unknown metric 'acuracy'", "did you mean 'accuracy'"],
    ),
    "unknown validator": (MOLP2S_HEAD, "validators: [no_such_check]\n", 7, ["no_such_check"]),
    "unknown family": (MOLP2S_HEAD, "family: molp3s\n", 7, ["unknown family 'molp3s'"]),
    "unknown prompt renderer": (
        MOLP2S_HEAD,
        "prompt:\n  renderer: nonesuch\n",
        8,
        ["prompt renderer 'nonesuch'"],
    ),
    "unknown loader param": (
        MOLP2S_HEAD,
        "loader:\n  name: molp2s\n  params: {bogus: 1}\n",
        9,
        ["loader 'molp2s'", "unknown param 'bogus'", "check_smiles"],
    ),
    "mistyped loader param": (
        MOLP2S_HEAD,
        "loader:\n  name: molp2s\n  params: {check_smiles: 'no'}\n",
        9,
        ["check_smiles='no'", "bool"],
    ),
    "unknown baseline param": (
        RETRIEVAL_HEAD,
        "baseline:\n  name: bm25\n  params:\n    kk: 3\n",
        10,
        ["baseline 'bm25'", "unknown param 'kk'"],
    ),
    "mistyped metric param": (
        RETRIEVAL_HEAD,
        "metrics:\n  - name: recall_at_k\n    primary: true\n    params: {k: '10'}\n",
        10,
        ["recall_at_k", "k='10'", "int"],
    ),
    "missing metric param": (
        RETRIEVAL_HEAD,
        "metrics:\n  - name: clean_at_k\n    primary: true\n    params: {flag: future}\n",
        10,
        ["clean_at_k", "missing param 'when'"],
    ),
    "params for an answer schema": (
        MOLP2S_HEAD,
        "answer_schema:\n  name: candidate_index\n  params: {x: 1}\n",
        9,
        ["takes no params"],
    ),
    "repeated metric output": (
        RETRIEVAL_HEAD,
        "metrics:\n  - {name: recall_at_k, primary: true}\n"
        "  - {name: latency_quantile}\n  - {name: latency_quantile, params: {q: 0.5}}\n",
        7,
        ["latency_p50", "repeat"],
    ),
    "label on a multi-value metric": (
        MOLP2S_HEAD,
        "metrics:\n  - {name: accuracy, primary: true}\n"
        "  - name: reaction_mc_scores\n    label: my_score\n",
        10,
        ["label", "3 values"],
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_user_entry_error_is_one_located_benchreg_error(tmp_path: Path, case: str) -> None:
    head, tail, line, words = ERRORS[case]
    path = write_entry(tmp_path, head + tail)
    with pytest.raises(BenchregError) as info:
        load_task("mine/t1", [tmp_path])
    error = info.value
    assert error.where == f"{path}:{line}"
    assert str(error).startswith(f"{path}:{line}: ")
    for word in words:
        assert word in error.message


def test_a_good_user_entry_binds(tmp_path: Path) -> None:
    write_entry(tmp_path, RETRIEVAL_HEAD + "baseline: {name: bm25, params: {k: 5}}\n")
    task = load_task("mine/t1", [tmp_path])
    assert task.baseline is not None and task.baseline.params == {"k": 5}
    assert task.sources[-1] == tmp_path / "mine" / "t1.yaml"


def test_bad_param_of_a_later_metric_is_located_at_that_metric(tmp_path: Path) -> None:
    path = write_entry(
        tmp_path,
        RETRIEVAL_HEAD
        + "metrics:\n  - {name: recall_at_k, primary: true, params: {k: 10}}\n"
        + "  - name: mrr\n    params: {kk: 2}\n",
    )
    with pytest.raises(BenchregError) as info:
        load_task("mine/t1", [tmp_path])
    assert "unknown param 'kk'" in info.value.message
    assert info.value.where == f"{path}:10"


def test_bad_param_value_rejected_by_the_metric_is_located(tmp_path: Path) -> None:
    path = write_entry(
        tmp_path,
        RETRIEVAL_HEAD
        + "metrics:\n  - name: latency_quantile\n    primary: true\n    params: {q: 2.0}\n",
    )
    with pytest.raises(BenchregError) as info:
        load_task("mine/t1", [tmp_path])
    assert str(path) in str(info.value.where)


def test_unknown_name_is_located_at_its_own_field(tmp_path: Path) -> None:
    path = write_entry(tmp_path, MOLP2S_HEAD + "loader: molp2s\nbaseline: molp2s\n")
    with pytest.raises(BenchregError, match="unknown baseline 'molp2s'") as info:
        load_task("mine/t1", [tmp_path])
    assert info.value.where == f"{path}:8"


def test_missing_metric_param_is_reported_by_bind_without_sources() -> None:
    spec = load_task("retrieval/pdf").spec
    broken = spec.model_copy(
        update={"metrics": [MetricRef(name="clean_at_k", params={"flag": "future"}, primary=True)]}
    )
    with pytest.raises(BenchregError, match="missing param 'when'") as info:
        bind(broken)
    assert info.value.where is None  # nothing to locate it in
    complete = spec.model_copy(
        update={
            "metrics": [
                MetricRef(
                    name="clean_at_k", params={"flag": "future", "when": "as_of"}, primary=True
                )
            ]
        }
    )
    assert bind(complete).primary.names == ("clean_future@10",)


# --- Bound.with_params ------------------------------------------------------------------------


def scaled(value: float, factor: float, *, offset: int = 0) -> float:
    return value * factor + offset


def test_bound_call_passes_params_after_positional_arguments() -> None:
    bound = Bound("scaled", scaled, {"factor": 2.0, "offset": 1}, n_args=1)
    assert bound(3.0) == 7.0


def test_with_params_merges_over_the_entry_and_leaves_the_original() -> None:
    bound = Bound("scaled", scaled, {"factor": 2.0}, n_args=1)
    more = bound.with_params({"offset": 5}, what="helper")
    assert more.params == {"factor": 2.0, "offset": 5}
    assert bound.params == {"factor": 2.0}
    assert more(1.0) == 7.0
    over = bound.with_params({"factor": 3.0}, what="helper")
    assert over(1.0) == 3.0


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"offest": 1}, ["helper 'scaled'", "unknown param 'offest'"]),
        ({"offset": "1"}, ["helper 'scaled'", "offset='1'", "int"]),
        ({"offset": True}, ["offset=True"]),
    ],
)
def test_with_params_checks_the_extra_params(extra: dict[str, Any], words: list[str]) -> None:
    bound = Bound("scaled", scaled, {"factor": 2.0}, n_args=1)
    with pytest.raises(BenchregError) as info:
        bound.with_params(extra, what="helper")
    for word in words:
        assert word in info.value.message


def test_with_params_requires_every_required_param() -> None:
    bound = Bound("scaled", scaled, {}, n_args=1)
    with pytest.raises(BenchregError, match="missing param 'factor'"):
        bound.with_params({"offset": 1}, what="helper")


def test_with_params_on_a_bound_baseline() -> None:
    task = load_task("retrieval/pdf")
    baseline = task.baseline
    assert baseline is not None and baseline.params == {}
    assert baseline.with_params({"k": 3}, what="baseline").params == {"k": 3}
    with pytest.raises(BenchregError, match="baseline 'bm25': unknown param 'kk'"):
        baseline.with_params({"kk": 3}, what="baseline")
    with pytest.raises(BenchregError, match="k='3'"):
        baseline.with_params({"k": "3"}, what="baseline")
