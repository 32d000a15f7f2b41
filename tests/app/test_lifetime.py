"""The collector is paused for start-up only, and resumed by the first job; one paused by
someone else stays paused."""

from __future__ import annotations

import gc

from benchreg.app import lifetime


def test_collector_paused_for_start_up_then_resumed() -> None:
    assert gc.isenabled()
    try:
        lifetime.collector_off_for_start_up()
        assert not gc.isenabled()
        lifetime.start_up_done()
        assert gc.isenabled()
        lifetime.start_up_done()  # a later job: nothing to do
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()


def test_a_collector_paused_elsewhere_stays_paused() -> None:
    gc.disable()
    try:
        lifetime.collector_off_for_start_up()
        lifetime.start_up_done()
        assert not gc.isenabled()
    finally:
        gc.enable()
