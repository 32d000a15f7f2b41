"""The counts `retrieval`: entries, answerable / unanswerable, scope, resolved predictions and
their results."""

from __future__ import annotations

from benchreg.core import registry
from benchreg.core.ranking.resolution import ResolvedRanking
from benchreg.core.types import Prediction, Sample, Status
from benchreg.families.retrieval.metrics import retrieval_counts

GOLD = {"source_id": "s", "region": {"turn": 1}}


def test_registered() -> None:
    assert registry.counts.get("retrieval") is retrieval_counts


def test_counts() -> None:
    samples = [
        Sample("a", {}, [GOLD], {"as_of": "2024-02-01T00:00:00+00:00", "holder": "alice"}),
        Sample("b", {}, [], {"as_of": None, "holder": None}),
        Sample("c", {}, [GOLD, GOLD], {"holder": "bob"}),
        Sample("d", {}, [], {}),
    ]
    predictions = [
        Prediction("a", resolved=ResolvedRanking(5, (1,))),
        Prediction("b", status=Status.INVALID, detail="bad"),
        Prediction("c", resolved=ResolvedRanking(3, (0, 2))),
        Prediction("d", resolved={"n_results": 9}),  # not a ResolvedRanking: not resolved
    ]
    assert retrieval_counts(samples, predictions) == {
        "entries": 4,
        "answerable": 2,
        "unanswerable": 2,
        "with_as_of": 1,
        "with_holder": 2,
        "scoped": 0,
        "demonstration_entries": 0,
        "resolved": 2,
        "results": 8,
        "out_of_scope_results": 0,
        "contradicting_results": 0,
    }


def test_scope_and_flag_counts() -> None:
    samples = [Sample("a", {}, [GOLD], {"session": "s", "demonstration": True})]
    resolved = ResolvedRanking(4, (2,), flagged={"out_of_scope": (1, 3),
                                                  "contradicts_manifest": (4,)})
    counts = retrieval_counts(samples, [Prediction("a", resolved=resolved)])
    assert (counts["scoped"], counts["demonstration_entries"]) == (1, 1)
    assert (counts["out_of_scope_results"], counts["contradicting_results"]) == (2, 1)


def test_no_samples() -> None:
    assert retrieval_counts([], []) == {
        "entries": 0, "answerable": 0, "unanswerable": 0, "with_as_of": 0, "with_holder": 0,
        "scoped": 0, "demonstration_entries": 0, "resolved": 0, "results": 0,
        "out_of_scope_results": 0, "contradicting_results": 0,
    }
