"""The abstention threshold: recall@10 and false recall per threshold from one run, and the
choice (harmonic mean of recall and abstention)."""

from __future__ import annotations

import pytest

from benchreg.families.retrieval.abstention import CHOSEN, best, chosen_min_relevance, curve


def test_curve_and_choice_by_hand() -> None:
    rows = [([1], [0.9, 0.2]),  # answerable, hit at rank 1
            ([2, 0], [0.5, 0.4]),  # answerable, one of two gold regions at rank 2
            ([], [0.3]),  # unanswerable
            ([], [0.6])]
    points = {round(c.threshold, 2): c for c in curve(rows)}
    assert set(points) == {0.0, 0.3, 0.5, 0.6, 0.9}
    assert (points[0.0].recall_at_10, points[0.0].false_recall) == (pytest.approx(0.75), 1.0)
    assert (points[0.3].recall_at_10, points[0.3].false_recall) == (pytest.approx(0.75), 0.5)
    assert (points[0.5].recall_at_10, points[0.5].false_recall) == (pytest.approx(0.5), 0.5)
    assert (points[0.6].recall_at_10, points[0.6].false_recall) == (pytest.approx(0.5), 0.0)
    assert points[0.0].h == 0.0  # never abstaining scores 0
    chosen = best(list(points.values()))
    assert chosen.threshold == pytest.approx(0.6) and chosen.h == pytest.approx(2 / 3)


def test_the_recorded_choice_is_used_for_its_data_set_and_the_default_chunker_only() -> None:
    assert set(CHOSEN) == {"LoCoMo", "MMLongBench-Doc"}
    for dataset, choice in CHOSEN.items():
        assert chosen_min_relevance(dataset) == choice["min_relevance"] > 0
        assert chosen_min_relevance(dataset, "window") == 0.0
    assert chosen_min_relevance("benchreg-sample-retrieval") == 0.0
    assert chosen_min_relevance(None) == 0.0
