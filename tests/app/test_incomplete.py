"""Failed requests are never a score: a run with failed requests is incomplete (exit 2, marked in
metrics.json and the sweep summary), and the same command asks only the failed samples again."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from benchreg.systems.fake_server import FakeChatServer

FAST = ["model.max_retries=0", "model.timeout_s=5", "model.concurrency=1", "run.batch_size=1"]
LIMIT = 4  # samples per job


class DyingServer(FakeChatServer):
    """Answers the first ``alive_for`` chat requests, then 503 until revived."""

    alive_for: int | None = None

    async def _chat(
        self, request: Mapping[str, Any], seen: int, writer: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if self.alive_for is not None and seen > self.alive_for:
            self.counts["dead"] += 1
            await self._send(writer, 503, {"error": {"message": "server is gone"}})
            return True
        return await super()._chat(request, seen, writer, *args, **kwargs)


@pytest.fixture
def server() -> Any:
    dying = DyingServer(lifetime_s=120)
    dying.start()
    yield dying
    dying.stop()


def sweep_args(server: FakeChatServer, sweep: Path, cache: Path) -> list[str]:
    return [
        "-m",
        "task=molp2s/gap,molp2s/infrared",
        "model=openai",
        f"model.base_url={server.base_url}",
        "model.model=fake",
        f"run.limit={LIMIT}",
        "run.bootstrap=0",
        f"run.cache_dir={cache}",
        f"hydra.sweep.dir={sweep}",
        *FAST,
    ]


def records(sweep: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(sweep.glob("*/metrics.json"))]


def scores(sweep: Path) -> dict[str, Sequence[tuple[str, Any]]]:
    out = {}
    for path in sorted(sweep.glob("*/samples.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        out[path.parent.name] = [(r["id"], r["answer"], r["status"]) for r in rows]
    return out


@pytest.mark.slow
def test_a_server_dying_mid_sweep_leaves_incomplete_jobs_that_the_rerun_completes(
    cli: Any, server: DyingServer, tmp_path: Path
) -> None:
    server.alive_for = LIMIT + 1  # the first job answers, the second gets one answer then 503s
    sweep = tmp_path / "sweep"
    first = cli(*sweep_args(server, sweep, tmp_path / "cache"))
    assert first.returncode == 2, first.stderr[-2000:]
    assert "Traceback" not in first.stderr
    done = records(sweep)
    assert [r["complete"] for r in done] == [True, False]
    incomplete = done[1]["incomplete"]
    assert incomplete["errors"] == LIMIT - 1 and incomplete["of"] == LIMIT
    assert "incomplete" in first.stderr and "run the same command again" in first.stderr
    summary = (sweep / "summary.md").read_text()
    assert "incomplete" in summary
    answered_before = server.counts["answered"]

    server.alive_for = None  # the server is back: the same command asks only what failed
    second = cli(*sweep_args(server, sweep, tmp_path / "cache"))
    assert second.returncode == 0, second.stderr[-2000:]
    assert server.counts["answered"] - answered_before == LIMIT - 1
    assert [r["complete"] for r in records(sweep)] == [True, True]

    clean = tmp_path / "clean"
    healthy = FakeChatServer(lifetime_s=120)
    with healthy.running():
        fault_free = cli(*sweep_args(healthy, clean, tmp_path / "cache-3"))
    assert fault_free.returncode == 0, fault_free.stderr[-2000:]
    assert list(scores(sweep).values()) == list(scores(clean).values())
    for resumed, reference in zip(records(sweep), records(clean), strict=True):
        assert resumed["metrics"] == reference["metrics"]


@pytest.mark.slow
def test_accept_errors_scores_failed_requests_as_wrong_and_says_so(
    cli: Any, server: DyingServer, tmp_path: Path
) -> None:
    server.alive_for = 1
    run_dir = tmp_path / "run"
    args = [
        "task=molp2s/gap",
        "model=openai",
        f"model.base_url={server.base_url}",
        "model.model=fake",
        f"run.limit={LIMIT}",
        "run.bootstrap=0",
        f"run.cache_dir={tmp_path / 'cache'}",
        f"hydra.run.dir={run_dir}",
        *FAST,
    ]
    refused = cli(*args)
    assert refused.returncode == 2 and "incomplete: 3 of 4 requests failed" in refused.stderr
    record = json.loads((run_dir / "metrics.json").read_text())
    assert record["complete"] is False and record["statuses"]["error"] == 3
    accepted = cli(*args, "run.accept_errors=true")
    assert accepted.returncode == 0, accepted.stderr[-2000:]
    record = json.loads((run_dir / "metrics.json").read_text())
    assert record["complete"] is True and record["errors_accepted"] == 3
    assert "scored as wrong answers" in accepted.stderr


def test_failed_later_repeats_make_the_cli_exit_2_and_the_rerun_asks_only_them(
    cli: Any, server: DyingServer, tmp_path: Path
) -> None:
    # repeat 0 answered whole, repeat 1 fails from its second request on: the run is no result
    server.alive_for = LIMIT + 1
    args = [
        "task=molp2s/gap",
        "model=openai",
        f"model.base_url={server.base_url}",
        "model.model=fake",
        f"run.limit={LIMIT}",
        "run.repeats=3",
        "run.bootstrap=0",
        f"run.cache_dir={tmp_path / 'cache'}",
        f"hydra.run.dir={tmp_path / 'run'}",
        *FAST,
    ]
    refused = cli(*args)
    failed = 3 * LIMIT - (LIMIT + 1)
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert f"incomplete: {failed} of {3 * LIMIT} requests failed" in refused.stderr
    record = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert record["complete"] is False and record["statuses"].get("error", 0) == 0
    server.alive_for = None
    answered = server.counts["answered"]
    again = cli(*args)
    assert again.returncode == 0, again.stderr[-2000:]
    assert server.counts["answered"] - answered == failed
