"""`run.repeats=k` (distinct cache entries and seeds, every repeat scored, mean with a CI clustered
by sample, majority vote, pass@k) and budgets (`run.max_tokens_total`, prices, `run.max_cost`):
a run stops cleanly, resumes, and reports tokens and cost."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchreg import RunOptions, load_task
from benchreg.core.errors import BenchregError
from benchreg.core.run import RunOutput, evaluate
from benchreg.core.system import Budget, BudgetReached
from benchreg.core.types import Prediction
from tests.systems.conftest import chat_cfg


def _evaluate(cfg: dict, folder: Path | None = None, **options: object):
    opts = RunOptions(n_boot=200, cache="off", progress=False, **options)  # type: ignore[arg-type]
    output = RunOutput(folder) if folder is not None else None
    return evaluate(
        load_task("molp2s/gap"), view=None, system_cfg=cfg, roots={}, options=opts, output=output
    )


def test_repeats_are_asked_apart_and_scored(fake_server) -> None:
    server = fake_server()
    result = _evaluate(chat_cfg(server.base_url, temperature=0.7), repeats=3).result
    n = len(result.samples)
    assert server.chat_requests == 3 * n  # distinct keys: nothing merged as "identical prompt"
    seeds = sorted({b.get("seed") for b in server.bodies if "messages" in b}, key=str)
    assert seeds == [0, 1, 2]  # repeat r sends seed base + r (base 0: model.seed unset)
    mean = result.metrics["accuracy_repeats_mean"]
    assert len(mean.detail["per_repeat"]) == 3
    assert mean.value == pytest.approx(sum(mean.detail["per_repeat"]) / 3)
    assert "clustered by sample" in mean.ci_method and mean.ci95[0] <= mean.value <= mean.ci95[1]
    assert "accuracy_majority" in result.metrics and "accuracy_pass@3" in result.metrics
    assert result.metrics["accuracy_pass@3"].value >= max(mean.detail["per_repeat"])
    assert result.metrics["accuracy_pass@1"].value == pytest.approx(mean.value)
    first = result.predictions[0].metadata["repeats"]
    assert [r["repeat"] for r in first] == [1, 2] and all("raw_output" in r for r in first)
    assert result.statuses["ok"] + result.statuses["invalid"] == n  # repeat 0's statuses


def test_repeats_have_their_own_cache_entries(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    cfg = chat_cfg(server.base_url)
    opts = {"cache": "read_write", "cache_dir": str(tmp_path)}
    n = len(_evaluate_cached(cfg, opts, repeats=1).samples)
    assert server.chat_requests == n
    _evaluate_cached(cfg, opts, repeats=2)  # repeat 0 cached by the first run
    assert server.chat_requests == 2 * n
    _evaluate_cached(cfg, opts, repeats=2)
    assert server.chat_requests == 2 * n


def _evaluate_cached(cfg: dict, opts: dict, **more: object):
    options = RunOptions(n_boot=0, progress=False, **opts, **more)  # type: ignore[arg-type]
    return evaluate(
        load_task("molp2s/gap"), view=None, system_cfg=cfg, roots={}, options=options
    ).result


def test_a_token_budget_stops_the_run_and_a_larger_one_resumes_it(
    fake_server, tmp_path: Path
) -> None:
    server = fake_server()
    cfg = chat_cfg(server.base_url, concurrency=1)
    folder = tmp_path / "run"
    stopped = _evaluate(cfg, folder, max_tokens_total=2000).record
    journaled = (folder / "journal.jsonl").read_text().splitlines()
    asked = server.chat_requests
    assert 0 < len(journaled) == asked < 16  # stopped, every answer so far kept
    # written, and no result: the requests not asked are failed ones, even under accept_errors
    assert stopped["complete"] is False
    incomplete = stopped["incomplete"]
    assert incomplete["by_cause"] == {"budget reached": 16 - asked}
    assert re.match(r"budget reached: .* of run\.max_tokens_total=2,000", incomplete["stopped"])
    assert "raise the budget" in incomplete["resume"]
    again = _evaluate(cfg, folder, max_tokens_total=2000, accept_errors=True).record
    assert again["complete"] is False and server.chat_requests == asked
    evaluation = _evaluate(cfg, folder, max_tokens_total=10**6)
    assert server.chat_requests == 16  # only the rest was asked
    budget = evaluation.record["system"]["stats"]["budget"]
    assert budget["tokens"] > 2000 and budget["max_tokens_total"] == 10**6


def test_prices_give_a_cost_and_a_cost_limit(fake_server, tmp_path: Path) -> None:
    server = fake_server()
    cfg = chat_cfg(server.base_url, concurrency=1)
    prices = {"price_prompt_per_1m": 1000.0, "price_completion_per_1m": 2000.0}
    evaluation = _evaluate(cfg, tmp_path / "a", **prices)
    budget = evaluation.record["system"]["stats"]["budget"]
    expected = (budget["prompt_tokens"] * 1000 + budget["completion_tokens"] * 2000) / 1e6
    assert budget["cost"] == pytest.approx(expected) and budget["cost"] > 0
    with pytest.raises(BudgetReached, match=r"a cost of .* of run\.max_cost=0\.5"):
        _evaluate(cfg, None, max_cost=0.5, **prices)  # no run folder: the stop itself
    stopped = _evaluate(cfg, tmp_path / "b", max_cost=0.5, **prices).record
    assert stopped["complete"] is False and "run.max_cost=0.5" in stopped["incomplete"]["stopped"]


def test_a_cost_limit_without_prices_is_refused() -> None:
    with pytest.raises(BenchregError, match=r"run\.max_cost needs prices"):
        Budget.from_options({"max_cost": 1.0})
    assert Budget.from_options({}) is None


def test_the_budget_counts_each_answer_once_and_never_a_cached_one() -> None:
    budget = Budget(max_tokens_total=10)
    asked = Prediction("a", metadata={"usage": {"prompt_tokens": 4, "completion_tokens": 2}})
    cached = Prediction("b", metadata={"usage": {"prompt_tokens": 9}, "cached": True})
    for prediction in (asked, asked, cached):
        budget.spend(prediction)
    assert budget.tokens == 6 and budget.spent() is None
    budget.spend(Prediction("c", metadata={"usage": {"prompt_tokens": 4}}))
    assert budget.spent() is not None
    with pytest.raises(BudgetReached):
        budget.check()
    assert json.dumps(budget.as_dict())
