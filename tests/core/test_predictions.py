"""The shared predictions collector: unknown ids, malformed entries, duplicate policies, notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.predictions import PredictionCollector
from benchreg.core.types import Prediction, Sample, Status

SAMPLES = [Sample(f"s{i}", {}, 0) for i in range(4)]
PATH = Path("/data/preds.jsonl")


def collector(policy: str = "conflicts_invalid") -> PredictionCollector:
    return PredictionCollector(PATH, SAMPLES, task="t/x", duplicates=policy)  # type: ignore[arg-type]


def test_known_unknown_missing_and_malformed_are_reported() -> None:
    c = collector()
    c.add("s0", Prediction("s0", answer=1), where="f:1")
    c.add("ghost", Prediction("ghost", answer=1), where="f:2")
    c.add_malformed("f:3")
    result = c.finish()
    assert set(result.by_id) == {"s0"}
    assert result.unknown_ids == ["ghost"]
    assert result.files == [PATH]
    assert "t/x: 3 sample(s) have no prediction: s1, s2, s3" in result.notes
    assert any("1 prediction(s) for unknown sample ids, ignored: ghost" in n for n in result.notes)
    assert any("1 malformed entr(y/ies)" in n and "f:3" in n for n in result.notes)


def test_identical_repeat_is_harmless_and_a_conflict_is_invalid() -> None:
    c = collector()
    c.add("s0", Prediction("s0", answer=1), where="f:1")
    c.add("s0", Prediction("s0", answer=1), where="f:2")
    c.add("s1", Prediction("s1", answer=1), where="f:3")
    c.add("s1", Prediction("s1", answer=2), where="f:4")
    result = c.finish()
    assert result.by_id["s0"].status is Status.OK
    conflict = result.by_id["s1"]
    assert conflict.status is Status.INVALID
    assert conflict.detail == "conflicting duplicate entries (f:3, f:4)"
    assert any("scored as invalid: s1" in n for n in result.notes)


def test_reject_policy_names_both_places() -> None:
    c = collector("reject")
    c.add("s0", Prediction("s0", answer=1), where="f:1")
    with pytest.raises(BenchregError) as info:
        c.add("s0", Prediction("s0", answer=1), where="f:7")
    assert info.value.message.startswith("f:7: duplicate prediction for 's0' (first at f:1)")


def test_reject_policy_also_rejects_a_repeated_unknown_id() -> None:
    c = collector("reject")
    c.add("ghost", Prediction("ghost", answer=1), where="f:1")
    with pytest.raises(BenchregError, match="duplicate prediction for 'ghost'"):
        c.add("ghost", Prediction("ghost", answer=1), where="f:2")


def test_a_file_answering_no_sample_stops_with_a_hint() -> None:
    c = collector()
    c.add("other-split-1", Prediction("other-split-1", answer=0), where="f:1")
    with pytest.raises(BenchregError, match="none of the 4 samples of t/x has a") as info:
        c.finish()
    assert "another split or task" in info.value.message and "other-split-1" in info.value.message


def test_value_tells_repeats_apart_when_the_answer_is_not_set() -> None:
    c = collector()
    c.add("s0", Prediction("s0", raw_text="A"), where="f:1", value="A")
    c.add("s0", Prediction("s0", raw_text="B"), where="f:2", value="B")
    assert c.finish().by_id["s0"].status is Status.INVALID


@pytest.mark.parametrize(
    "ids",
    [
        ["s0", "s1", "s2", "s3"],  # the well-formed file: the bulk path
        ["s0", "ghost", "s1"],
        ["s0", "s1", "s0"],  # a repeat
        ["s2", "ghost", "ghost"],
    ],
)
@pytest.mark.parametrize("policy", ["reject", "conflicts_invalid"])
def test_add_all_is_add_of_each(ids: list[str], policy: str) -> None:
    entries = [(sid, Prediction(sid, answer=k), k + 1) for k, sid in enumerate(ids)]

    def outcome(bulk: bool) -> object:
        c = collector(policy)
        try:
            if bulk:
                c.add_all(entries)
            else:
                for sid, pred, where in entries:
                    c.add(sid, pred, where=where)
        except BenchregError as exc:
            return exc.message, exc.where
        result = c.finish()
        later = c.add("s0", Prediction("s0", answer=99), where=9) if policy != "reject" else None
        return result.by_id, result.unknown_ids, result.notes, later, c.by_id.get("s0")

    assert outcome(True) == outcome(False)
