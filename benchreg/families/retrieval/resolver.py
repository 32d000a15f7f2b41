"""Resolver `retrieval_regions`: which gold regions each result hits, and which results leak.

Built per run from the loaded data set (its manifest and corpus). For every scored prediction,
in rank order, a result

- is **out of scope** (flag `out_of_scope`) when the query is about one item (`scope.session`,
  e.g. one document, screen or commit) and the result is from another source (param
  `honour_scope`, default true);
- takes its time and holder from the **corpus, never from the system**: a unit's own
  `observed_at`/`holder` in the corpus file (a conversation turn), else its source's manifest
  row. The result's own `observed_at`/`holder` can add a flag, never clear one: it is flagged
  `future` when the corpus time or the claimed time is after the query's `as_of`, and
  `foreign_holder` when the corpus holder or the claimed holder is not the query's
  `scope.holder`; a claim that contradicts the corpus is flagged as well (and recorded under
  `contradicts_manifest`). With neither a corpus nor a claimed value the result is `unknown`
  (counted apart, not a leak);
- hits a gold region when it is of the same source and overlaps it without being much coarser
  (overlap.py, :class:`HitRules`: the resolver params), unless it is flagged: a leaked or
  out-of-scope result is never a valid hit.

The result is a :class:`benchreg.core.ranking.ResolvedRanking` (per gold region the rank of the
first result hitting it, the flagged ranks, and the extent of the first `context_depth` results
for `context_at_k`); it is also written, as JSON, to the prediction's metadata (`resolution`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from itertools import repeat
from typing import Any

from benchreg.core import registry
from benchreg.core.ranking.resolution import ResolvedRanking, score_summary
from benchreg.core.types import Dataset, Prediction, Sample
from benchreg.families.retrieval.columns import ResultColumns, RunColumns, columns_of
from benchreg.families.retrieval.corpus import CorpusView
from benchreg.families.retrieval.overlap import HIT, UNITS, HitRules, SourceGold, extent
from benchreg.families.retrieval.records import ManifestRow
from benchreg.families.retrieval.times import parse_time
from benchreg.families.retrieval.vector import resolve_columns

FUTURE, FOREIGN = "future", "foreign_holder"
OUT_OF_SCOPE, CONTRADICTS = "out_of_scope", "contradicts_manifest"
CONTEXT_DEPTH = 10

# single-unit result regions of these modalities hit only gold regions with the same unit value
UNIT = {"conversation": "turn", "pdf": "page"}
Region = Mapping[str, Any]


def _gold_index(
    sample: Sample, unit: str | None, corpus: CorpusView | None
) -> dict[str, tuple[dict[Any, list[tuple[int, Region]]], list[tuple[int, Region]], SourceGold]]:
    """Per gold source: its regions by unit value, all of them as (gold index, region), and
    what the hit rules need of the entry's gold in that source."""
    modality = sample.meta["modality"]
    index: dict[
        str, tuple[dict[Any, list[tuple[int, Region]]], list[tuple[int, Region]], SourceGold]
    ] = {}
    for i, gold in enumerate(sample.gold):
        source = gold["source_id"]
        if source not in index:
            spans = corpus.spans(source) if corpus is not None and modality == "code" else None
            index[source] = ({}, [], SourceGold(modality, [], spans))
        by_unit, pairs, ctx = index[source]
        region = gold["region"]
        pairs.append((i, region))
        ctx.regions.append(region)
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
    """Without flags to compute, a single-turn conversation result or an image result hits a
    gold region exactly when their keys agree ((source, turn) or source), so the first rank of
    each gold region is found with C-level ``list.index`` (no object per result). None when a
    result has another shape (a turn range)."""
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


def _latest(times: list[str]) -> datetime | None:
    parsed = [parse_time(t) for t in times]
    return max(parsed) if parsed else None


class _Authority:
    """The time and holders of a result's region as the corpus gives them."""

    def __init__(
        self, modality: str, manifest: Mapping[str, ManifestRow], corpus: CorpusView | None
    ) -> None:
        self.modality, self.manifest, self.corpus = modality, manifest, corpus

    def of(self, source: str, region: Region) -> tuple[datetime | None, set[str]]:
        row = self.manifest.get(source)
        units = (
            self.corpus.unit_meta(source)
            if self.corpus is not None and self.modality == "conversation"
            else None
        )
        if units:
            lo = region.get("turn", region.get("turn_start"))
            hi = region.get("turn", region.get("turn_end"))
            if lo is not None and hi is not None:
                metas = [units[t] for t in range(lo, hi + 1) if t in units]
                times = [m[0] for m in metas if m[0]]
                holders = {m[1] for m in metas if m[1]}
                if times or holders:
                    time = _latest(times) if times else None
                    if time is None and row is not None and row.observed_at:
                        time = parse_time(row.observed_at)
                    if not holders and row is not None and row.holder:
                        holders = {row.holder}
                    return time, holders
        if row is None:
            return None, set()
        time = parse_time(row.observed_at) if row.observed_at else None
        return time, ({row.holder} if row.holder else set())


def resolve_results(
    sample: Sample,
    results: list[Mapping[str, Any]],
    manifest: Mapping[str, ManifestRow],
    *,
    rules: HitRules | None = None,
    corpus: CorpusView | None = None,
    honour_scope: bool = True,
    context_depth: int = CONTEXT_DEPTH,
) -> ResolvedRanking:
    modality = sample.meta["modality"]
    as_of_text, holder = sample.meta.get("as_of"), sample.meta.get("holder")
    scope = sample.meta.get("session") if honour_scope else None
    as_of = parse_time(as_of_text) if as_of_text else None
    flags = as_of is not None or holder is not None or scope is not None
    max_score, n_unscored = score_summary(_scores(results))
    first_hit = None if flags else _first_hits_by_key(sample, results, modality)
    if first_hit is not None:  # single turns or images: one unit each
        extents = (1.0,) * min(len(results), context_depth)
        return ResolvedRanking(
            len(results), tuple(first_hit), {}, {}, max_score, n_unscored, extents, UNITS[modality]
        )
    leaks = _Leaks(_Authority(modality, manifest, corpus), scope, as_of, holder) if flags else None
    first_hit, extents = _walk(sample, results, rules or HitRules(), corpus, leaks, context_depth)
    return ResolvedRanking(
        n_results=len(results),
        first_hit=tuple(first_hit),
        flagged={k: tuple(v) for k, v in leaks.flagged.items() if v} if leaks else {},
        unknown={k: tuple(v) for k, v in leaks.unknown.items() if v} if leaks else {},
        max_score=max_score,
        n_unscored=n_unscored,
        extents=tuple(extents),
        extent_unit=UNITS[modality],
    )


class _Leaks:
    """The flags of a query with a scope, an `as_of` or a holder, rank by rank."""

    def __init__(
        self, authority: _Authority, scope: str | None, as_of: datetime | None, holder: str | None
    ) -> None:
        self.authority, self.scope, self.as_of, self.holder = authority, scope, as_of, holder
        self.flagged: dict[str, list[int]] = {
            FUTURE: [],
            FOREIGN: [],
            OUT_OF_SCOPE: [],
            CONTRADICTS: [],
        }
        self.unknown: dict[str, list[int]] = {FUTURE: [], FOREIGN: []}

    def leak(self, rank: int, item: Mapping[str, Any], source: str, region: Region) -> bool:
        """Whether the result at ``rank`` is flagged (out of scope, future, foreign holder)."""
        leak = False
        if self.scope is not None and source != self.scope:
            self.flagged[OUT_OF_SCOPE].append(rank)
            leak = True
        if self.as_of is not None or self.holder is not None:
            time, owners = self.authority.of(source, region)
            leak |= _check_time(item, time, self.as_of, rank, self.flagged, self.unknown)
            leak |= _check_holder(item, owners, self.holder, rank, self.flagged, self.unknown)
        return leak


def _walk(
    sample: Sample,
    results: list[Mapping[str, Any]],
    rules: HitRules,
    corpus: CorpusView | None,
    leaks: _Leaks | None,
    context_depth: int,
) -> tuple[list[int], list[float | None]]:
    """The results in rank order: per gold region the rank of the first unflagged result that
    hits it (0: none), and the extents of the first ``context_depth`` results."""
    modality = sample.meta["modality"]
    hit, unit = HIT[modality], UNIT.get(modality)
    index = _gold_index(sample, unit, corpus)
    first_hit = [0] * len(sample.gold)
    remaining = len(first_hit)
    extents: list[float | None] = []
    for rank, item in enumerate(results, start=1):
        source, region = item["source_id"], item["region"]
        if rank <= context_depth:
            spans = corpus.spans(source) if corpus is not None and modality == "code" else None
            extents.append(extent(modality, region, spans))
        elif leaks is None and not remaining:
            break  # every gold region is hit and no result can carry a flag
        leak = leaks is not None and leaks.leak(rank, item, source, region)
        if leak or not remaining:
            continue
        gold = index.get(source)
        if gold is None:
            continue
        by_unit, pairs, ctx = gold
        candidates = by_unit.get(region[unit], ()) if unit and unit in region else pairs
        for i, gold_region in candidates:
            if not first_hit[i] and hit(region, gold_region, ctx, rules):
                first_hit[i] = rank
                remaining -= 1
    return first_hit, extents


def _check_time(
    item: Mapping[str, Any],
    time: datetime | None,
    as_of: datetime | None,
    rank: int,
    flagged: dict[str, list[int]],
    unknown: dict[str, list[int]],
) -> bool:
    if as_of is None:
        return False
    future = time is not None and time > as_of
    claimed = item.get("observed_at")
    if claimed is not None:
        claimed_time = parse_time(claimed)
        future |= claimed_time > as_of
        if time is not None and claimed_time != time:
            flagged[CONTRADICTS].append(rank)
            future = True
    if future:
        flagged[FUTURE].append(rank)
    elif time is None and claimed is None:
        unknown[FUTURE].append(rank)
    return future


def _check_holder(
    item: Mapping[str, Any],
    owners: set[str],
    holder: str | None,
    rank: int,
    flagged: dict[str, list[int]],
    unknown: dict[str, list[int]],
) -> bool:
    if holder is None:
        return False
    foreign = any(owner != holder for owner in owners)
    claimed = item.get("holder")
    if claimed is not None:
        foreign |= claimed != holder
        if owners and claimed not in owners:
            if not flagged[CONTRADICTS] or flagged[CONTRADICTS][-1] != rank:
                flagged[CONTRADICTS].append(rank)
            foreign = True
    if foreign:
        flagged[FOREIGN].append(rank)
    elif not owners and claimed is None:
        unknown[FOREIGN].append(rank)
    return foreign


@registry.resolvers.register("retrieval_regions")
def make_resolver(
    dataset: Dataset,
    record: bool = True,
    honour_scope: bool = True,
    pdf_max_pages: int = 1,
    ui_min_iou: float = 0.5,
    video_min_iou: float = 0.5,
    video_min_precision: float = 0.5,
    conversation_min_precision: float = 0.5,
    code_max_lines: int = 50,
    context_depth: int = CONTEXT_DEPTH,
) -> Callable[[Sample, Prediction], ResolvedRanking]:
    """``record``: also keep the resolution in ``prediction.metadata['resolution']``;
    ``honour_scope``: a result outside the query's `scope.session` never hits; the other params
    are the hit rules (overlap.py) and how many results' extents are kept for `context_at_k`."""
    manifest_obj = dataset.info.get("manifest_obj")
    rules = HitRules(
        pdf_max_pages=int(pdf_max_pages),
        ui_min_iou=float(ui_min_iou),
        video_min_iou=float(video_min_iou),
        video_min_precision=float(video_min_precision),
        conversation_min_precision=float(conversation_min_precision),
        code_max_lines=int(code_max_lines),
    )
    return _Resolver(
        dataset.info.get("manifest", {}),
        CorpusView(manifest_obj) if manifest_obj is not None else None,
        rules,
        record=record,
        honour_scope=bool(honour_scope),
        context_depth=int(context_depth),
    )


class _Resolver:
    """The resolver of one run: one prediction at a time (a call), or all of them
    (:meth:`resolve_many`, which the core calls when a resolver has it)."""

    def __init__(
        self,
        manifest: Mapping[str, ManifestRow],
        corpus: CorpusView | None,
        rules: HitRules,
        *,
        record: bool,
        honour_scope: bool,
        context_depth: int,
    ) -> None:
        self.manifest, self.corpus, self.rules = manifest, corpus, rules
        self.record, self.honour_scope, self.context_depth = record, honour_scope, context_depth

    def __call__(self, sample: Sample, prediction: Prediction) -> ResolvedRanking:
        results = prediction.answer["results"]
        if type(results) is ResultColumns:
            results = list(results)
        resolved = resolve_results(
            sample,
            results,
            self.manifest,
            rules=self.rules,
            corpus=self.corpus,
            honour_scope=self.honour_scope,
            context_depth=self.context_depth,
        )
        if self.record:
            prediction.metadata["resolution"] = resolved.to_json()
        return resolved

    def resolve_many(self, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> None:
        """The resolution of every pair, into ``prediction.resolved``: columnar results of
        queries without `as_of` and `scope.holder` together (vector.py), the others one by
        one."""
        groups: dict[int, tuple[RunColumns, list[Sample], list[Prediction]]] = {}
        for sample, prediction in zip(samples, predictions, strict=True):
            held = columns_of(prediction.answer)
            meta = sample.meta
            if (
                held is None
                or held.run.modality != meta["modality"]
                or meta.get("as_of") is not None
                or meta.get("holder") is not None
            ):
                prediction.resolved = self(sample, prediction)
                continue
            group = groups.setdefault(id(held.run), (held.run, [], []))
            group[1].append(sample)
            group[2].append(prediction)
        for run, group_samples, group_predictions in groups.values():
            found = resolve_columns(
                run,
                group_samples,
                [p.answer["results"] for p in group_predictions],
                honour_scope=self.honour_scope,
                context_depth=self.context_depth,
            )
            for prediction, resolved in zip(group_predictions, found, strict=True):
                prediction.resolved = resolved
                if self.record:
                    prediction.metadata["resolution"] = resolved.to_json()
