"""Invalid never beats wrong (issue 37, item 2): at the same entry, an invalid, missing or failed
answer scores no better than a wrong ranking (results that hit no gold item and carry every flag)
in every scoring metric of every retrieval modality: recall, MRR and nDCG 0, clean@k 0, and a
false recall on an unanswerable entry. context@k and latency are no scores (tests/families/
invalid_vs_wrong.py says why)."""

from __future__ import annotations

import pytest

from benchreg.core.ranking.resolution import ResolvedRanking
from benchreg.core.types import Prediction, Sample

from ..invalid_vs_wrong import NOT_ANSWERS, embedded, not_an_answer, not_better, values

MODALITIES = ["pdf", "conversation", "code", "image", "ui_screenshot", "video"]
FLAGS = ("future", "foreign_holder")


def ranking(sample: Sample, *, hit: bool) -> Prediction:
    n_gold = len(sample.gold or [])
    resolved = ResolvedRanking(
        n_results=10,
        first_hit=tuple(range(1, n_gold + 1)) if hit else (0,) * n_gold,
        flagged={} if hit else {flag: (1,) for flag in FLAGS},
        max_score=1.0,
    )
    return Prediction(sample.id, answer=["r"], resolved=resolved)


@pytest.mark.parametrize("modality", MODALITIES)
def test_an_invalid_answer_scores_no_better_than_a_wrong_ranking(modality: str) -> None:
    samples, metrics = embedded(f"retrieval/{modality}")
    perfect = [ranking(s, hit=True) for s in samples]
    for position, sample in enumerate(samples):
        wrong = [*perfect]
        wrong[position] = ranking(sample, hit=False)
        for status in NOT_ANSWERS:
            invalid = [*perfect]
            invalid[position] = not_an_answer(sample.id, status, ["r"])
            for metric in metrics:
                got, bad = values(metric, samples, invalid), values(metric, samples, wrong)
                assert not not_better(got, bad), (modality, sample.id, status)
