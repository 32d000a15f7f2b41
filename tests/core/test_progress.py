"""Progress: periodic plain lines off a terminal, silent for short work."""

from __future__ import annotations

import pytest
from loguru import logger

from benchreg.core.progress import Progress


@pytest.fixture
def lines() -> list[str]:
    found: list[str] = []
    handler = logger.add(lambda m: found.append(str(m).strip()), level="INFO", format="{message}")
    yield found
    logger.remove(handler)


def test_plain_lines_report_done_total_rate_and_eta(lines: list[str]) -> None:
    progress = Progress("scoring", 10, every_s=0.0, terminal=False)
    progress.advance(4)
    progress.finish()
    assert lines[0].startswith("scoring: 4/10 (") and "s left)" in lines[0]
    assert lines[-1].startswith("scoring: 4/10 done in")


def test_short_work_is_silent(lines: list[str]) -> None:
    progress = Progress("scoring", 10, every_s=60.0, terminal=False)
    progress.advance(10)
    progress.finish()
    assert lines == []


def test_disabled_progress_says_nothing(lines: list[str]) -> None:
    progress = Progress("scoring", 10, enabled=False, every_s=0.0, terminal=True)
    progress.advance(10)
    progress.finish()
    assert lines == []
