"""The resolver `retrieval_regions`: first hit per gold region; the `future` and
`foreign_holder` flags from the corpus (a result's own claim can add a flag, never clear one;
a contradicting claim is flagged); `out_of_scope`; extents; and that the key-based fast path
agrees with the general one."""

from __future__ import annotations

from typing import Any

import pytest

from benchreg.core import registry
from benchreg.core.ranking.resolution import ResolvedRanking
from benchreg.core.types import Dataset, Prediction, Sample
from benchreg.families.retrieval.records import ManifestRow
from benchreg.families.retrieval.resolver import (
    CONTRADICTS,
    FOREIGN,
    FUTURE,
    OUT_OF_SCOPE,
    _first_hits_by_key,
    make_resolver,
    resolve_results,
)

JAN, MAR = "2024-01-10T09:00:00+00:00", "2024-03-10T09:00:00+00:00"
AS_OF = "2024-02-01T00:00:00+00:00"


def manifest_row(source_id: str, observed: str | None, holder: str | None) -> ManifestRow:
    return ManifestRow(source_id=source_id, modality="conversation", dataset="d", revision="r",
                       license="CC0-1.0", annotation_source="a", observed_at=observed,
                       holder=holder)


MANIFEST = {"s0": manifest_row("s0", JAN, "alice"), "s1": manifest_row("s1", MAR, "bob"),
            "s2": manifest_row("s2", None, None)}


def sample(modality: str, gold: list[tuple[str, dict[str, Any]]], *, as_of: str | None = None,
           holder: str | None = None, session: str | None = None) -> Sample:
    return Sample("q", {}, [{"source_id": s, "region": r} for s, r in gold],
                  {"modality": modality, "as_of": as_of, "holder": holder, "session": session})


def result(source: str, region: dict[str, Any], score: float | None = 1.0,
           **extra: Any) -> dict[str, Any]:
    return {"source_id": source, "region": region, "score": score, **extra}


def test_registered() -> None:
    assert registry.resolvers.get("retrieval_regions") is make_resolver


def test_conversation_first_hits() -> None:
    gold = sample("conversation", [("s0", {"turn": 1}), ("s0", {"turn": 3}), ("s1", {"turn": 0})])
    results = [result("s1", {"turn": 1}, 3.0), result("s0", {"turn": 3}, 2.0),
               result("s0", {"turn": 1}, None), result("s0", {"turn": 3}, 0.5)]
    assert resolve_results(gold, results, MANIFEST) == ResolvedRanking(
        n_results=4, first_hit=(3, 2, 0), flagged={}, unknown={}, max_score=3.0, n_unscored=1,
        extents=(1.0, 1.0, 1.0, 1.0), extent_unit="turns")


def test_a_turn_range_hits_the_gold_turns_in_it_when_mostly_gold() -> None:
    gold = sample("conversation", [("s0", {"turn": 1}), ("s0", {"turn": 2}), ("s0", {"turn": 9})])
    results = [result("s0", {"turn_start": 0, "turn_end": 2}),  # 2 of 3 turns gold: hits
               result("s0", {"turn_start": 3, "turn_end": 9})]  # 1 of 7: too coarse
    assert _first_hits_by_key(gold, results, "conversation") is None  # ranges: no fast path
    resolved = resolve_results(gold, results, MANIFEST)
    assert resolved.first_hit == (1, 1, 0)
    assert resolved.extents == (3.0, 7.0)


def test_image_hits_by_source() -> None:
    gold = sample("image", [("b", {}), ("z", {})])
    results = [result("a", {}), result("b", {}), result("b", {})]
    assert resolve_results(gold, results, {}).first_hit == (2, 0)


@pytest.mark.parametrize(
    ("region", "first_hit"),
    [({"page": 2}, (1, 1, 0)), ({"page": 2, "block": 1}, (1, 0, 0)),
     ({"page_start": 1, "page_end": 3}, (0, 0, 0)),  # three pages: coarser than one
     ({"page_start": 3, "page_end": 3}, (0, 0, 1)), ({"page": 4}, (0, 0, 0))],
)
def test_pdf_hits(region: dict[str, Any], first_hit: tuple[int, ...]) -> None:
    gold = sample("pdf", [("d", {"page": 2, "block": 1}), ("d", {"page": 2, "block": 0}),
                          ("d", {"page": 3})])
    assert resolve_results(gold, [result("d", region)], {}).first_hit == first_hit


def test_another_source_never_hits() -> None:
    gold = sample("video", [("v", {"t_start": 0.0, "t_end": 5.0})])
    results = [result("w", {"t_start": 0.0, "t_end": 5.0}), result("v", {"t_start": 1.0,
                                                                        "t_end": 6.0})]
    assert resolve_results(gold, results, {}).first_hit == (2,)


def test_out_of_scope_results_never_hit() -> None:
    gold = sample("pdf", [("d", {"page": 2})], session="d")
    results = [result("e", {"page": 2}), result("d", {"page": 2})]
    resolved = resolve_results(gold, results, {})
    assert (resolved.first_hit, resolved.flagged) == ((2,), {OUT_OF_SCOPE: (1,)})
    assert resolve_results(gold, results[:1], {}, honour_scope=False).flagged == {}


def test_future_results_are_flagged_and_never_hit() -> None:
    gold = sample("conversation", [("s1", {"turn": 0})], as_of=AS_OF)
    results = [
        result("s1", {"turn": 0}),  # manifest: observed in March, after as_of
        result("s1", {"turn": 0}, observed_at=JAN),  # a claimed time cannot clear the flag
        result("s2", {"turn": 5}),  # no time anywhere: unknown
        result("s0", {"turn": 0}),  # manifest: January
        result("s2", {"turn": 0}, observed_at=MAR),  # a claimed future time adds the flag
        result("s0", {"turn": 1}, observed_at=MAR),  # contradicting the manifest: flagged
    ]
    resolved = resolve_results(gold, results, MANIFEST)
    assert resolved.first_hit == (0,)  # s1 turn 0 is the gold, but every copy of it leaks
    assert resolved.flagged == {FUTURE: (1, 2, 5, 6), CONTRADICTS: (2, 6)}
    assert resolved.unknown == {FUTURE: (3,)}


def test_a_turn_takes_its_time_from_the_corpus() -> None:
    class Units:  # a corpus whose turn 2 was said later than its session's manifest time
        def unit_meta(self, source: str) -> dict[int, tuple[str | None, str | None]] | None:
            return {1: (JAN, None), 2: (MAR, None)} if source == "s0" else None

        def spans(self, source: str) -> None:
            return None

    gold = sample("conversation", [("s0", {"turn": 2})], as_of=AS_OF)
    results = [result("s0", {"turn": 2}), result("s0", {"turn": 2}, observed_at=JAN),
               result("s0", {"turn": 1}), result("s0", {"turn_start": 1, "turn_end": 2})]
    resolved = resolve_results(gold, results, MANIFEST, corpus=Units())  # type: ignore[arg-type]
    assert resolved.first_hit == (0,)
    assert resolved.flagged == {FUTURE: (1, 2, 4), CONTRADICTS: (2,)}


def test_foreign_holders_are_flagged() -> None:
    gold = sample("conversation", [("s0", {"turn": 0})], holder="alice")
    results = [
        result("s0", {"turn": 0}, holder="bob"),  # a claim contradicting the manifest: flagged
        result("s1", {"turn": 0}),  # manifest: bob
        result("s2", {"turn": 0}),  # unknown holder
        result("s0", {"turn": 0}),  # manifest: alice
        result("zz", {"turn": 0}),  # not in the manifest: unknown
        result("s1", {"turn": 0}, holder="alice"),  # a claim cannot clear the manifest's bob
    ]
    resolved = resolve_results(gold, results, MANIFEST)
    assert resolved.first_hit == (4,)
    assert resolved.flagged == {FOREIGN: (1, 2, 6), CONTRADICTS: (1, 6)}
    assert resolved.unknown == {FOREIGN: (3, 5)}


def test_flags_are_collected_past_the_last_hit() -> None:
    gold = sample("conversation", [("s0", {"turn": 0})], as_of=AS_OF, holder="alice")
    results = [result("s0", {"turn": 0}), result("s1", {"turn": 1})]
    resolved = resolve_results(gold, results, MANIFEST)
    assert resolved.first_hit == (1,)
    assert resolved.flagged == {FUTURE: (2,), FOREIGN: (2,)}


def test_the_fast_path_agrees_with_the_general_one() -> None:
    gold = sample("conversation", [("s0", {"turn": 1}), ("s1", {"turn": 1}), ("s0", {"turn": 2})])
    results = [result("s1", {"turn": 2}), result("s0", {"turn": 2}), result("s1", {"turn": 1}),
               result("s0", {"turn": 1})]
    fast = _first_hits_by_key(gold, results, "conversation")
    assert fast == [4, 3, 2]
    # an as_of on the query makes flags to compute (none is raised): the general path
    timed = sample("conversation", [(g["source_id"], g["region"]) for g in gold.gold],
                   as_of="2099-01-01T00:00:00+00:00")
    assert list(resolve_results(timed, results, MANIFEST).first_hit) == fast


def test_scores_summary() -> None:
    gold = sample("code", [("r", {"path": "a.py", "line": 3})])
    results = [result("r", {"path": "a.py", "line_start": 1, "line_end": 5}, None),
               result("r", {"path": "a.py", "symbol": "f"}, 0.25)]
    resolved = resolve_results(gold, results, {})
    assert (resolved.first_hit, resolved.max_score, resolved.n_unscored) == ((1,), 0.25, 1)
    assert resolved.extents == (5.0, None)  # a symbol's extent needs the corpus


def test_no_results() -> None:
    resolved = resolve_results(sample("pdf", [("d", {"page": 1})]), [], {})
    assert resolved == ResolvedRanking(0, (0,), {}, {}, None, 0, (), "pages")


def test_make_resolver_records_the_resolution() -> None:
    gold = sample("conversation", [("s1", {"turn": 0})], as_of=AS_OF)
    dataset = Dataset(samples=[gold], files=[], info={"manifest": MANIFEST})
    prediction = Prediction("q", answer={"results": [result("s1", {"turn": 0})]})
    resolved = make_resolver(dataset)(gold, prediction)
    assert resolved.flagged == {FUTURE: (1,)}
    assert prediction.metadata["resolution"] == {
        "n_results": 1, "first_hit": [0], "flagged": {"future": [1]}, "unknown": {},
        "max_score": 1.0, "n_unscored": 0, "extents": [1.0], "extent_unit": "turns",
    }
    assert ResolvedRanking.from_json(prediction.metadata["resolution"]) == resolved
    quiet = Prediction("q", answer=prediction.answer)
    make_resolver(dataset, record=False)(gold, quiet)
    assert quiet.metadata == {}


def test_a_dataset_without_a_manifest_gives_unknown_flags() -> None:
    gold = sample("conversation", [("s1", {"turn": 0})], as_of=AS_OF)
    prediction = Prediction("q", answer={"results": [result("s1", {"turn": 0})]})
    resolved = make_resolver(Dataset(samples=[gold], files=[]))(gold, prediction)
    assert (resolved.first_hit, resolved.unknown) == ((1,), {FUTURE: (1,)})
