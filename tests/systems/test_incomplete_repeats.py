"""A failed request in any repeat leaves the run incomplete (`complete: false`), counted by repeat
and cause, and the same command asks only the failed requests again (issue 37, item 3)."""

from __future__ import annotations

from pathlib import Path

from benchreg import RunOptions, load_task
from benchreg.core.run import RunOutput, evaluate
from tests.systems.conftest import chat_cfg

N = 16  # molp2s/gap's embedded samples
ALIVE_FOR = 21  # the server: it dies after 21 answers, in repeat 1


def _evaluate(cfg: dict, folder: Path, **options: object):
    opts = RunOptions(n_boot=50, cache="off", progress=False, repeats=3, **options)  # type: ignore[arg-type]
    return evaluate(
        load_task("molp2s/gap"),
        view=None,
        system_cfg=cfg,
        roots={},
        options=opts,
        output=RunOutput(folder),
    )


def test_failed_later_repeats_leave_the_run_incomplete_and_only_they_are_asked_again(
    fake_server, tmp_path: Path
) -> None:
    server = fake_server(fail_after=ALIVE_FOR)
    cfg = chat_cfg(server.base_url, concurrency=1, max_retries=0)
    folder = tmp_path / "run"
    first = _evaluate(cfg, folder).record
    assert first["complete"] is False
    assert first["statuses"].get("error", 0) == 0  # repeat 0 answered whole: not what decides
    incomplete = first["incomplete"]
    assert incomplete["errors"] == 3 * N - ALIVE_FOR and incomplete["of"] == 3 * N
    assert incomplete["by_repeat"] == {"1": 2 * N - ALIVE_FOR, "2": N}
    assert sum(incomplete["by_cause"].values()) == incomplete["errors"]

    server.fail_after = None  # back: the same command asks the 27 failed requests, no more
    second = _evaluate(cfg, folder).record
    assert server.counts["answered"] == 3 * N
    assert second["complete"] is True and "incomplete" not in second


def test_accept_errors_scores_failed_repeats_as_wrong_and_says_how_many(
    fake_server, tmp_path: Path
) -> None:
    server = fake_server(fail_after=ALIVE_FOR)
    cfg = chat_cfg(server.base_url, concurrency=1, max_retries=0)
    record = _evaluate(cfg, tmp_path / "run", accept_errors=True).record
    assert record["complete"] is True and record["errors_accepted"] == 3 * N - ALIVE_FOR
    assert sum(record["accepted_by_cause"].values()) == 3 * N - ALIVE_FOR
