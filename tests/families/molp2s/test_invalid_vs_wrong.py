"""Invalid never beats wrong (issue 37, item 2): at the same sample, an invalid, missing or failed
answer scores no better than a wrong candidate index in every metric of every MolP2S task entry
(accuracy: both are misses)."""

from __future__ import annotations

import pytest

from benchreg.core.types import Prediction

from ..invalid_vs_wrong import NOT_ANSWERS, embedded, not_an_answer, not_better, values


@pytest.mark.parametrize("task", ["molp2s/dipole", "molp2s/all_properties"])
def test_an_invalid_answer_scores_as_a_wrong_index(task: str) -> None:
    samples, metrics = embedded(task)
    gold = [Prediction(s.id, answer=s.gold) for s in samples]
    for position in range(min(len(samples), 4)):
        sample = samples[position]
        wrong = [*gold]
        wrong[position] = Prediction(sample.id, answer=sample.gold + 1)
        for status in NOT_ANSWERS:
            for answer in (None, "B", sample.gold):  # a planted answer is never read
                invalid = [*gold]
                invalid[position] = not_an_answer(sample.id, status, answer)
                for metric in metrics:
                    got, bad = values(metric, samples, invalid), values(metric, samples, wrong)
                    assert got == pytest.approx(bad), (task, position, status)  # both a miss
                    assert not not_better(got, bad)
