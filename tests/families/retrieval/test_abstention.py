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


def test_the_recorded_value_gives_the_chosen_figures_where_a_rounding_would_not() -> None:
    """Issue 37: the docs' table said false recall 0.5352 at min_relevance 0.1960, a run gave
    0.5493: 0.1960 is a rounding of the chosen threshold 0.19601..., below it, so the entry
    whose top relevance is the threshold kept its results. The recorded value sits inside the
    gap above the threshold and gives the chosen figures."""
    from benchreg.families.retrieval.abstention import recorded

    threshold = 0.19601452142238096
    rows = [([1], [0.9, 0.3]), ([0], [0.25]), ([], [threshold]), ([], [0.1]), ([], [0.5])]
    points = curve(rows)
    chosen = next(c for c in points if c.threshold == threshold)
    value = recorded(rows, threshold)
    assert threshold < value < 0.25 and len(repr(value)) <= 6  # short, and inside the gap

    def at(t: float) -> tuple[float, float]:
        # the baseline's rule: a result is kept when its relevance is above min_relevance
        kept = [[r for r in rel if r > t] for _, rel in rows]
        answerable = [(first, k) for (first, _), k in zip(rows, kept, strict=True) if first]
        recall = sum(sum(1 for f in first if 0 < f <= len(k)) / len(first)
                     for first, k in answerable) / len(answerable)
        unanswerable = [k for (first, _), k in zip(rows, kept, strict=True) if not first]
        return recall, sum(1 for k in unanswerable if k) / len(unanswerable)

    assert at(value) == (chosen.recall_at_10, chosen.false_recall)
    assert at(round(threshold, 4)) != at(value)  # the rounding keeps the entry at the threshold
