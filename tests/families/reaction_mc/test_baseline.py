"""Offline baseline `reaction_mc_nearest_reference`."""

from __future__ import annotations

import pytest

from benchreg import BenchregError, load_task, run_task


def test_baseline_follows_the_best_reference() -> None:
    result = run_task(load_task("reaction_mc/all_varying_reference"), view=None,
                      system_cfg={"name": "baseline"}, roots={})
    chosen = {p.sample_id: p.answer for p in result.predictions}
    # best reference n-Bu4NBr in "3 wt % aq. PS-750-M": option 2 (n-Bu4NI) shares that solvent
    assert chosen["10_1002_anie_202416132_si_4_table_1_q4_ref"] == 2


def test_baseline_takes_no_params() -> None:
    with pytest.raises(BenchregError, match="unknown param 'k'"):
        run_task(load_task("reaction_mc/all_varying"), view=None,
                 system_cfg={"name": "baseline", "params": {"k": 3}}, roots={})
