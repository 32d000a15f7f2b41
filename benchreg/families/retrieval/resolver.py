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

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from benchreg.core import registry
from benchreg.core.ranking.resolution import ResolvedRanking, score_summary
from benchreg.core.types import Dataset, Prediction, Sample
from benchreg.families.retrieval.overlap import HIT
from benchreg.families.retrieval.records import ManifestRow
from benchreg.families.retrieval.times import parse_time

FUTURE, FOREIGN = "future", "foreign_holder"


def resolve_results(
    sample: Sample, results: list[Mapping[str, Any]], manifest: Mapping[str, ManifestRow]
) -> ResolvedRanking:
    hit = HIT[sample.meta["modality"]]
    gold_by_source: dict[str, list[tuple[int, Mapping[str, Any]]]] = defaultdict(list)
    for i, gold in enumerate(sample.gold):
        gold_by_source[gold["source_id"]].append((i, gold["region"]))
    as_of_text, holder = sample.meta.get("as_of"), sample.meta.get("holder")
    as_of = parse_time(as_of_text) if as_of_text else None
    first_hit = [0] * len(sample.gold)
    flagged: dict[str, list[int]] = {FUTURE: [], FOREIGN: []}
    unknown: dict[str, list[int]] = {FUTURE: [], FOREIGN: []}
    for rank, item in enumerate(results, start=1):
        source = item["source_id"]
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
        if leak:
            continue
        for i, region in gold_by_source.get(source, ()):
            if not first_hit[i] and hit(item["region"], region):
                first_hit[i] = rank
    max_score, n_unscored = score_summary([item.get("score") for item in results])
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
