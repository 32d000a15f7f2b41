"""Region shapes per modality (`region_problem`, gold and result) and the fast check
`common_region`, which must never accept a region that `region_problem` refuses."""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any

import pytest

from benchreg.families.retrieval.regions import (
    COMMON,
    GOLD_SHAPES,
    MODALITIES,
    common_region,
    region_problem,
)

VALID_GOLD: list[tuple[str, dict[str, Any]]] = [
    ("pdf", {"page": 1}),
    ("pdf", {"page": 3, "block": 0}),
    ("image", {}),
    ("ui_screenshot", {"bbox": [0, 0, 10, 20]}),
    ("ui_screenshot", {"bbox": [0.1, 0.2, 0.3, 0.4]}),
    ("video", {"t_start": 0, "t_end": 2.5}),
    ("code", {"path": "a.py", "symbol": "Session.request"}),
    ("code", {"path": "a.py", "line": 1}),
    ("conversation", {"turn": 0}),
]
RESULT_ONLY: list[tuple[str, dict[str, Any]]] = [
    ("pdf", {"page_start": 1, "page_end": 3}),
    ("pdf", {"page_start": 2, "page_end": 2}),
    ("code", {"path": "a.py", "line_start": 1, "line_end": 9}),
    ("conversation", {"turn_start": 0, "turn_end": 4}),
]


def test_every_modality_has_shapes_and_a_fast_check() -> None:
    assert set(GOLD_SHAPES) == set(COMMON) == set(MODALITIES)


@pytest.mark.parametrize(("modality", "region"), VALID_GOLD)
def test_valid_gold_regions(modality: str, region: dict[str, Any]) -> None:
    assert region_problem(modality, region, gold=True) is None
    assert region_problem(modality, region, gold=False) is None


@pytest.mark.parametrize(("modality", "region"), RESULT_ONLY)
def test_ranges_are_for_results_only(modality: str, region: dict[str, Any]) -> None:
    assert region_problem(modality, region, gold=False) is None
    problem = region_problem(modality, region, gold=True)
    assert problem is not None and problem.startswith(f"{modality} region must be ")


@pytest.mark.parametrize(
    ("modality", "region", "gold", "message"),
    [
        ("pdf", [1], True, "region must be an object, got list"),
        ("pdf", None, False, "region must be an object, got NoneType"),
        ("pdf", {}, True, "whole-file gold is not allowed for pdf: name a region"),
        ("code", {"path": "a.py"}, True, "whole-file gold is not allowed for code: name a region"),
        ("video", {}, True, "whole-file gold is not allowed for video: name a region"),
        ("conversation", {}, True, "conversation region must be {turn}, got {}"),
        ("pdf", {"turn": 1}, False,
         "pdf region must be {page} or {block, page} or {page_end, page_start}, got {turn}"),
        ("pdf", {"page_start": 1, "page_end": 2}, True,
         "pdf region must be {page} or {block, page}, got {page_end, page_start}"),
        ("image", {"page": 1}, False, "image region must be {}, got {page}"),
        ("video", {"t_start": 0.0}, False, "video region must be {t_end, t_start}, got {t_start}"),
        ("pdf", {"page": 0}, True, "page must be an integer >= 1, got 0"),
        ("pdf", {"page": True}, True, "page must be an integer >= 1, got True"),
        ("pdf", {"page": 1.0}, True, "page must be an integer >= 1, got 1.0"),
        ("pdf", {"page": 1, "block": -1}, True, "block must be an integer >= 0, got -1"),
        ("conversation", {"turn": -1}, True, "turn must be an integer >= 0, got -1"),
        ("code", {"path": "a.py", "line": 0}, True, "line must be an integer >= 1, got 0"),
        ("code", {"path": "", "symbol": "f"}, True, "path must be a non-empty string, got ''"),
        ("code", {"path": "a.py", "symbol": 3}, True, "symbol must be a non-empty string, got 3"),
        ("pdf", {"page_start": 3, "page_end": 2}, False, "page_start 3 is after page_end 2"),
        ("code", {"path": "a.py", "line_start": 9, "line_end": 1}, False,
         "line_start 9 is after line_end 1"),
        ("conversation", {"turn_start": 5, "turn_end": 4}, False,
         "turn_start 5 is after turn_end 4"),
        ("ui_screenshot", {"bbox": [0, 0, 1]}, True,
         "bbox must be [x0, y0, x1, y1] (4 numbers), got [0, 0, 1]"),
        ("ui_screenshot", {"bbox": [0, 0, 1, math.nan]}, True,
         "bbox must be [x0, y0, x1, y1] (4 numbers), got [0, 0, 1, nan]"),
        ("ui_screenshot", {"bbox": (0, 0, 1, 1)}, True,
         "bbox must be [x0, y0, x1, y1] (4 numbers), got (0, 0, 1, 1)"),
        ("ui_screenshot", {"bbox": [0, 0, 0, 1]}, True,
         "bbox [0, 0, 0, 1] has no area (needs x0 < x1 and y0 < y1)"),
        ("video", {"t_start": "0", "t_end": 1}, True,
         "t_start and t_end must be numbers, got '0', 1"),
        ("video", {"t_start": 2, "t_end": 1}, True,
         "video interval [2, 1] must satisfy 0 <= t_start < t_end"),
        ("video", {"t_start": -1.0, "t_end": 1.0}, True,
         "video interval [-1.0, 1.0] must satisfy 0 <= t_start < t_end"),
        ("video", {"t_start": 1.0, "t_end": 1.0}, True,
         "video interval [1.0, 1.0] must satisfy 0 <= t_start < t_end"),
    ],
)
def test_region_problems(modality: str, region: Any, gold: bool, message: str) -> None:
    assert region_problem(modality, region, gold=gold) == message


@pytest.mark.parametrize(
    ("modality", "region", "expected"),
    [
        ("conversation", {"turn": 0}, True),
        ("conversation", {"turn": -1}, False),
        ("conversation", {"turn": True}, False),
        ("conversation", {"turn_start": 0, "turn_end": 2}, False),  # a range: look closer
        ("pdf", {"page": 1}, True),
        ("pdf", {"page": 0}, False),
        ("pdf", {"page": 2, "block": 0}, True),
        ("pdf", {"page": 2, "block": True}, False),
        ("pdf", {"page_start": 1, "page_end": 2}, False),
        ("image", {}, True),
        ("image", {"x": 1}, False),
        ("ui_screenshot", {"bbox": [0.0, 0.0, 1.0, 1.0]}, True),
        ("ui_screenshot", {"bbox": [0, 0, 1, 1]}, False),  # ints: valid, but not the fast shape
        ("ui_screenshot", {"bbox": [0.0, 0.0, math.nan, 1.0]}, False),
        ("ui_screenshot", {"bbox": [-math.inf, 0.0, 1.0, 1.0]}, False),
        ("ui_screenshot", {"bbox": [0.0, 0.0, 1.0]}, False),
        ("video", {"t_start": 0.0, "t_end": 1.5}, True),
        ("video", {"t_start": 0, "t_end": 1}, False),
        ("video", {"t_start": 0.0, "t_end": math.inf}, False),
        ("video", {"t_start": 1.0, "t_end": 1.0}, False),
        ("code", {"path": "a.py", "symbol": "f"}, True),
        ("code", {"path": "a.py", "line": 1}, True),
        ("code", {"path": "a.py", "line": 0}, False),
        ("code", {"path": "", "symbol": "f"}, False),
        ("code", {"path": "a.py", "symbol": ""}, False),
    ],
)
def test_common_region(modality: str, region: dict[str, Any], expected: bool) -> None:
    assert common_region(modality, region) is expected
    if expected:  # the fast check never accepts what the full check refuses
        assert region_problem(modality, region, gold=False) is None


def test_common_region_wants_a_plain_dict() -> None:
    proxy = MappingProxyType({"turn": 1})
    assert common_region("conversation", proxy) is False
    assert region_problem("conversation", proxy, gold=True) is None  # but it is a valid region
    assert common_region("conversation", None) is False
