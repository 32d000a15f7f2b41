"""A run refused after its folder was claimed (a server that fails every request once the check
before the run passed) gives the folder back: the corrected command runs there."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg import RunOptions, load_task
from benchreg.core.errors import BenchregError
from benchreg.core.run import RunOutput, evaluate
from tests.systems.conftest import chat_cfg


def _evaluate(cfg: dict, folder: Path):
    return evaluate(
        load_task("molp2s/gap"),
        view=None,
        system_cfg=cfg,
        roots={},
        options=RunOptions(n_boot=0, cache="off", progress=False),
        output=RunOutput(folder),
    )


def test_the_corrected_command_runs_in_the_folder_of_a_refused_run(
    fake_server, tmp_path: Path
) -> None:
    dying = fake_server(fail_after=0)  # the models listing answers, every chat request fails
    folder = tmp_path / "run"
    with pytest.raises(BenchregError, match="stopped early"):
        _evaluate(chat_cfg(dying.base_url, max_retries=0), folder)
    assert dying.chat_requests > 0  # refused after the claim, not by the check before it
    assert not folder.exists()  # nothing kept: no answer, no claim, no lock
    healthy = fake_server()
    evaluation = _evaluate(chat_cfg(healthy.base_url), folder)
    assert evaluation.record is not None and evaluation.record["complete"] is True
    assert sorted(p.name for p in folder.iterdir()) == [
        "journal.jsonl",
        "metrics.json",
        "provenance.json",
        "run.json",
        "samples.jsonl",
    ]
