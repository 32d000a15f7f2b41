"""Invalid never beats wrong (issue 37, item 2): at the same question, an invalid, missing or
failed answer scores no better than any option, the worst one included, in all three outputs of
`reaction_mc_scores` (both sources): it scores 0, and no option scores below 0."""

from __future__ import annotations

import pytest

from benchreg.core.types import Prediction
from benchreg.families.reaction_mc.metrics import ReactionScores

from ..invalid_vs_wrong import NOT_ANSWERS, embedded, not_an_answer, not_better, values

TASKS = ["reaction_mc/single_varying", "reaction_mc/all_varying_reference"]


@pytest.mark.parametrize("source", ["formula", "stored"])
@pytest.mark.parametrize("task", TASKS)
def test_an_invalid_answer_scores_no_better_than_the_worst_option(task: str, source: str) -> None:
    samples, _ = embedded(task)
    metric = ReactionScores(source=source)
    base = [Prediction(s.id, answer=0) for s in samples]
    for position, sample in enumerate(samples[:5]):
        for status in NOT_ANSWERS:
            invalid = [*base]
            invalid[position] = not_an_answer(sample.id, status, 0)
            got = values(metric, samples, invalid)
            for option in range(len(sample.input["options"])):
                wrong = [*base]
                wrong[position] = Prediction(sample.id, answer=option)
                assert not not_better(got, values(metric, samples, wrong)), (task, option)
