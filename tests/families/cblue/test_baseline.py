"""The offline baseline `cblue_trivial`."""

from __future__ import annotations

from benchreg.families.cblue.catalogue import TASK_NAMES

from .cblue_helpers import run_cblue


def test_baseline_runs_offline_on_every_task() -> None:
    for task in TASK_NAMES:
        result = run_cblue(task, None, None, system="baseline")
        assert result.statuses["ok"] == len(result.samples)
        assert result.system_name == "baseline:cblue_trivial"
    sts = run_cblue("CHIP-STS", None, None, system="baseline")
    firsts = [s.input["answer_choices"][0] for s in sts.samples]
    assert "相同" in firsts  # read as model text: 相同 -> 是的
    expected = [{"相同": "是的", "不同": "不是"}.get(c, c) for c in firsts]
    assert [p.answer for p in sts.predictions] == expected
