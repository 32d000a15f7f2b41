"""core.idle: work offered for a wait, run at most once, never required."""

from __future__ import annotations

from benchreg.core import idle


def test_offered_work_runs_once_in_order_and_only_within_its_block() -> None:
    ran: list[str] = []
    with idle.offered(lambda: ran.append("a")), idle.offered(lambda: ran.append("b")):
        idle.run_offered()
        idle.run_offered()
    assert ran == ["a", "b"]
    with idle.offered(lambda: ran.append("c")):
        pass
    idle.run_offered()  # its block ended: dropped
    with idle.offered(None):
        idle.run_offered()
    assert ran == ["a", "b"]


def test_an_error_in_offered_work_is_left_to_the_step_that_needs_it() -> None:
    ran: list[str] = []

    def fails() -> None:
        raise ValueError("bad file")

    with idle.offered(fails), idle.offered(lambda: ran.append("next")):
        idle.run_offered()  # no raise
    assert ran == ["next"]
