"""Resolver `retrieval_regions`: which gold regions each result hits, and which results leak.

Built per run from the loaded data set (its manifest). For every scored prediction, in rank
order, a result

- takes its `observed_at` and `holder` from the result, else from its source's manifest row;
- is flagged `future` when observed after the query's `as_of` (unknown time: `unknown`, not a
  leak) and `foreign_holder` when its holder is not the query's `scope.holder` (unknown holder:
  `unknown`);
- hits a gold region when it is of the same source and its region overlaps (overlap.py), unless
  it is flagged: a leaked result is never a valid hit.

The result is a :class:`benchreg.core.ranking.ResolvedRanking` (per gold region the rank of the
first result hitting it); it is also written, as JSON, to the prediction's metadata
(`resolution`) for the per-holder / per-as_of analysis.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import repeat
from typing import Any

from benchreg.core import registry
from benchreg.core.ranking.resolution import ResolvedRanking, score_summary
from benchreg.core.types import Dataset, Prediction, Sample
from benchreg.families.retrieval.overlap import HIT
from benchreg.families.retrieval.records import ManifestRow
from benchreg.families.retrieval.times import parse_time

FUTURE, FOREIGN = "future", "foreign_holder"


# single-unit result regions of these modalities hit only gold regions with the same unit value
UNIT = {"conversation": "turn", "pdf": "page"}
Region = Mapping[str, Any]


def _gold_index(
    sample: Sample, unit: str | None
) -> dict[str, tuple[dict[Any, list[tuple[int, Region]]], list[tuple[int, Region]]]]:
    """Per gold source: its regions by unit value, and all of them as (gold index, region)."""
    index: dict[str, tuple[dict[Any, list[tuple[int, Region]]], list[tuple[int, Region]]]] = {}
    for i, gold in enumerate(sample.gold):
        by_unit, pairs = index.setdefault(gold["source_id"], ({}, []))
        region = gold["region"]
        pairs.append((i, region))
        if unit is not None:
            by_unit.setdefault(region[unit], []).append((i, region))
    return index


def _scores(results: list[Mapping[str, Any]]) -> list[Any]:
    if set(map(type, results)) <= {dict}:
        return list(map(dict.get, results, repeat("score")))
    return [item.get("score") for item in results]


def _first_hits_by_key(
    sample: Sample, results: list[Mapping[str, Any]], modality: str
) -> list[int] | None:
    """Without flags to compute, a conversation or image result hits a gold region exactly when
    their keys agree ((source, turn) or source), so the first rank of each gold region is found
    with C-level ``list.index`` (no object per result). None when a result has another shape
    (a turn range)."""
    if modality not in ("conversation", "image") or set(map(type, results)) - {dict}:
        return None
    sources = list(map(dict.get, results, repeat("source_id")))
    if modality == "image":
        return [_index(sources, g["source_id"]) + 1 for g in sample.gold]
    turns = list(map(dict.get, map(dict.get, results, repeat("region")), repeat("turn")))
    if None in turns:
        return None
    first = []
    for gold in sample.gold:
        source, turn = gold["source_id"], gold["region"]["turn"]
        at = _index(turns, turn)
        while at >= 0 and sources[at] != source:
            at = _index(turns, turn, at + 1)
        first.append(at + 1)
    return first


def _index(values: list[Any], value: Any, start: int = 0) -> int:
    try:
        return values.index(value, start)
    except ValueError:
        return -1


def resolve_results(
    sample: Sample, results: list[Mapping[str, Any]], manifest: Mapping[str, ManifestRow]
) -> ResolvedRanking:
    modality = sample.meta["modality"]
    hit, unit = HIT[modality], UNIT.get(modality)
    as_of_text, holder = sample.meta.get("as_of"), sample.meta.get("holder")
    as_of = parse_time(as_of_text) if as_of_text else None
    flags = as_of is not None or holder is not None
    first_hit = None if flags else _first_hits_by_key(sample, results, modality)
    if first_hit is not None:
        max_score, n_unscored = score_summary(_scores(results))
        return ResolvedRanking(len(results), tuple(first_hit), {}, {}, max_score, n_unscored)
    index = _gold_index(sample, unit)
    first_hit = [0] * len(sample.gold)
    remaining = len(first_hit)
    flagged: dict[str, list[int]] = {FUTURE: [], FOREIGN: []}
    unknown: dict[str, list[int]] = {FUTURE: [], FOREIGN: []}
    for rank, item in enumerate(results, start=1):
        source = item["source_id"]
        if flags:
            row = manifest.get(source)
            leak = False
            if as_of is not None:
                observed = item.get("observed_at") or (row.observed_at if row else None)
                if observed is None:
                    unknown[FUTURE].append(rank)
                elif parse_time(observed) > as_of:
                    flagged[FUTURE].append(rank)
                    leak = True
            if holder is not None:
                owner = item.get("holder") or (row.holder if row else None)
                if owner is None:
                    unknown[FOREIGN].append(rank)
                elif owner != holder:
                    flagged[FOREIGN].append(rank)
                    leak = True
            if leak or not remaining:
                continue
        elif not remaining:
            break  # every gold region is hit and no result can carry a flag
        gold = index.get(source)
        if gold is None:
            continue
        region = item["region"]
        candidates = gold[0].get(region[unit], ()) if unit and unit in region else gold[1]
        for i, gold_region in candidates:
            if not first_hit[i] and hit(region, gold_region):
                first_hit[i] = rank
                remaining -= 1
    max_score, n_unscored = score_summary(_scores(results))
    return ResolvedRanking(
        n_results=len(results),
        first_hit=tuple(first_hit),
        flagged={k: tuple(v) for k, v in flagged.items() if v},
        unknown={k: tuple(v) for k, v in unknown.items() if v},
        max_score=max_score,
        n_unscored=n_unscored,
    )


@registry.resolvers.register("retrieval_regions")
def make_resolver(
    dataset: Dataset, record: bool = True
) -> Callable[[Sample, Prediction], ResolvedRanking]:
    """``record``: also keep the resolution in ``prediction.metadata['resolution']``."""
    manifest: Mapping[str, ManifestRow] = dataset.info.get("manifest", {})

    def resolve(sample: Sample, prediction: Prediction) -> ResolvedRanking:
        resolved = resolve_results(sample, prediction.answer["results"], manifest)
        if record:
            prediction.metadata["resolution"] = resolved.to_json()
        return resolved

    return resolve
