"""`ordered_map`: results in input order, a bounded number pending, errors raised in order."""

from __future__ import annotations

import threading
import time

import pytest

from benchreg.core.threads import ordered_map


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_results_keep_the_input_order(threads: int) -> None:
    def slow_for_small(x: int) -> int:
        time.sleep(0.002 * (10 - x % 10))  # earlier items finish later
        return x * x

    assert list(ordered_map(slow_for_small, range(25), threads=threads)) == [
        x * x for x in range(25)
    ]


def test_at_most_ahead_items_are_taken_before_a_result_is_used() -> None:
    taken: list[int] = []
    lock = threading.Lock()

    def items() -> object:
        for x in range(20):
            with lock:
                taken.append(x)
            yield x

    results = ordered_map(lambda x: x, items(), threads=2, ahead=3)
    assert next(results) == 0
    assert len(taken) == 3  # 0, 1, 2 submitted; nothing more drawn until the next result
    assert list(results) == list(range(1, 20))


def test_an_error_is_raised_where_its_item_is() -> None:
    def fail_at_five(x: int) -> int:
        if x == 5:
            raise ValueError("five")
        return x

    got = []
    with pytest.raises(ValueError, match="five"):
        for value in ordered_map(fail_at_five, range(10), threads=2):
            got.append(value)
    assert got == [0, 1, 2, 3, 4]
