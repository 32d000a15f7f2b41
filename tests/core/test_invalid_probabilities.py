"""Invalid never beats wrong in the option-probability scores (issue 37, item 2): an invalid,
missing or failed answer has no probabilities and scores as the worst wrong answer (all mass on a
wrong option): its log loss and Brier score are never below those of any answer with
probabilities at the same sample. ECE counts it as a confident wrong answer; ECE is a calibration
gap, not monotone in one answer, so it is not compared."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchreg.core.scoring import probability_scores
from benchreg.core.types import Prediction, Sample, Status

N_OPTIONS = 4
probabilities = st.lists(st.floats(0.0, 1.0), min_size=N_OPTIONS, max_size=N_OPTIONS).filter(
    lambda p: sum(p) > 0.01
)
golds = st.integers(0, N_OPTIONS - 1) | st.lists(
    st.integers(0, N_OPTIONS - 1), min_size=1, max_size=2, unique=True
)


def answer(sample_id: str, weights: list[float]) -> Prediction:
    probs = (np.asarray(weights) / sum(weights)).tolist()
    return Prediction(sample_id, answer=int(np.argmax(probs)), metadata={"option_probs": probs})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    gold=st.lists(golds, min_size=1, max_size=6),
    data=st.data(),
    status=st.sampled_from([Status.INVALID, Status.MISSING, Status.ERROR]),
)
def test_no_probabilities_score_no_better_than_any_probabilities(
    gold: list, data: st.DataObject, status: Status
) -> None:
    samples = [Sample(str(i), {}, g) for i, g in enumerate(gold)]
    preds = [answer(s.id, data.draw(probabilities)) for s in samples]
    at = data.draw(st.integers(0, len(samples) - 1))
    wrong = [*preds]
    wrong[at] = answer(str(at), data.draw(probabilities))
    invalid = [*preds]
    invalid[at] = Prediction(str(at), status=status)
    if len(samples) == 1:  # a run needs one answer with probabilities to have these scores
        assert probability_scores(samples, invalid, n_boot=0) == {}
        return
    got = probability_scores(samples, invalid, n_boot=0)
    bad = probability_scores(samples, wrong, n_boot=0)
    for name in ("log_loss", "brier"):
        assert got[name].value >= bad[name].value - 1e-12, name
        assert got[name].n == bad[name].n == len(samples)
    assert got["ece"].detail["scored_as_worst"] == 1
