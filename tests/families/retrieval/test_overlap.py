"""Every overlap rule of the issue, per modality."""

from __future__ import annotations

import pytest

from benchreg.families.retrieval.overlap import hits

CASES = [
    ("pdf", {"page": 3}, {"page": 3}, True),
    ("pdf", {"page": 3}, {"page": 4}, False),
    ("pdf", {"page": 3}, {"page": 3, "block": 2}, True),  # a page covers its blocks
    ("pdf", {"page": 3, "block": 2}, {"page": 3, "block": 2}, True),
    ("pdf", {"page": 3, "block": 1}, {"page": 3, "block": 2}, False),
    ("pdf", {"page": 3, "block": 1}, {"page": 3}, True),  # only one side gives a block
    ("pdf", {"page_start": 2, "page_end": 4}, {"page": 4}, True),
    ("pdf", {"page_start": 2, "page_end": 4}, {"page": 5}, False),
    ("image", {}, {}, True),
    ("ui_screenshot", {"bbox": [0, 0, 10, 10]}, {"bbox": [5, 5, 20, 20]}, True),
    ("ui_screenshot", {"bbox": [0, 0, 10, 10]}, {"bbox": [10, 0, 20, 10]}, False),  # edge only
    ("ui_screenshot", {"bbox": [0, 0, 10, 10]}, {"bbox": [20, 20, 30, 30]}, False),
    ("video", {"t_start": 0.0, "t_end": 10.0}, {"t_start": 9.0, "t_end": 12.0}, True),
    ("video", {"t_start": 0.0, "t_end": 10.0}, {"t_start": 10.0, "t_end": 12.0}, False),
    ("code", {"path": "a.py", "symbol": "Session"}, {"path": "a.py", "symbol": "Session"}, True),
    ("code", {"path": "a.py", "symbol": "Session"},
     {"path": "a.py", "symbol": "Session.request"}, True),
    ("code", {"path": "a.py", "symbol": "Session.request"},
     {"path": "a.py", "symbol": "Session"}, False),
    ("code", {"path": "a.py", "symbol": "Sess"}, {"path": "a.py", "symbol": "Session"}, False),
    ("code", {"path": "b.py", "symbol": "Session"}, {"path": "a.py", "symbol": "Session"}, False),
    ("code", {"path": "a.py", "line_start": 5, "line_end": 9}, {"path": "a.py", "line": 9}, True),
    ("code", {"path": "a.py", "line_start": 5, "line_end": 9}, {"path": "a.py", "line": 10},
     False),
    ("code", {"path": "a.py", "line": 7}, {"path": "a.py", "line": 7}, True),
    ("code", {"path": "a.py", "symbol": "f"}, {"path": "a.py", "line": 7}, False),
    ("conversation", {"turn": 4}, {"turn": 4}, True),
    ("conversation", {"turn_start": 2, "turn_end": 6}, {"turn": 6}, True),
    ("conversation", {"turn_start": 2, "turn_end": 6}, {"turn": 7}, False),
]


@pytest.mark.parametrize(("modality", "result", "gold", "expected"), CASES)
def test_overlap_rule(modality: str, result: dict, gold: dict, expected: bool) -> None:
    assert hits(modality, result, gold) is expected
