"""The resolver's rules on columnar results (columns.py), for many queries at once with numpy.

Columns hold single-unit results only: a conversation turn ``{turn}``, a pdf page ``{page}``,
a whole image ``{}``. For those the hit rules (overlap.py) reduce to equal keys: such a result
hits a gold region of its source exactly when the units agree (a one-turn result is all gold
when it hits; a one-page result spans 1 <= `pdf_max_pages` pages and gives no block, so it
covers every block of its page; an image result hits its image's gold). A result of another
source than the query's `scope.session` (with `honour_scope`) is flagged `out_of_scope` and
never hits. Queries with an `as_of` or a `scope.holder` (whose flags depend on the corpus and on
what each result claims) are not resolved here: the resolver gives them the per-result path.

Per query the outcome is what `resolver.resolve_results` gives: per gold region the rank of the
first unflagged result with its key (0 = none), the out-of-scope ranks, the highest non-null
score and the number of null ones, and the extents of the first `context_depth` results (1 unit
each).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from benchreg.core.ranking.resolution import ResolvedRanking
from benchreg.core.types import Sample
from benchreg.families.retrieval.columns import ResultColumns, RunColumns
from benchreg.families.retrieval.overlap import UNITS

OUT_OF_SCOPE = "out_of_scope"
NO_SOURCE = -2  # a gold or scope source that no result names


def resolve_columns(
    run: RunColumns,
    samples: Sequence[Sample],
    held: Sequence[ResultColumns],
    *,
    honour_scope: bool,
    context_depth: int,
) -> list[ResolvedRanking]:
    m = len(held)
    starts = np.fromiter((h.start for h in held), dtype=np.int64, count=m)
    lengths = np.fromiter((h.stop - h.start for h in held), dtype=np.int64, count=m)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    total = int(offsets[-1])
    query = np.repeat(np.arange(m, dtype=np.int64), lengths)
    within = np.arange(total, dtype=np.int64) - offsets[:-1][query]  # 0-based rank
    rows = starts[query] + within
    source = run.source[rows].astype(np.int64)
    unit = run.unit[rows]
    scoped = _scope_sources(run, samples, honour_scope)[query]
    outside = (scoped != -1) & (source != scoped)
    # gold keys, in sample order
    gold_query, gold_source, gold_unit, n_gold = _keys(run, samples)
    first = _first_ranks(query, source, unit, within, ~outside, gold_query, gold_source, gold_unit)
    max_score, n_unscored = _score_summary(run.score[rows], offsets, lengths)
    out_ranks = _ranks_by_query(outside, query, within, m)
    return _rankings(
        UNITS[run.modality],
        first.tolist(),
        n_gold,
        lengths.tolist(),
        out_ranks,
        max_score,
        n_unscored,
        context_depth,
    )


def _scope_sources(run: RunColumns, samples: Sequence[Sample], honour_scope: bool) -> np.ndarray:
    """Per query, the source id of its `scope.session` (-1: no scope; NO_SOURCE: a source no
    result names)."""
    scope = np.full(len(samples), -1, dtype=np.int64)
    if honour_scope:
        names = run.sources
        for j, sample in enumerate(samples):
            session = sample.meta.get("session")
            if session is not None:
                scope[j] = names.get(session, NO_SOURCE)
    return scope


def _rankings(
    unit_name: str,
    first_list: list[int],
    n_gold: list[int],
    lengths_list: list[int],
    out_ranks: list[tuple[int, ...]],
    max_score: Sequence[float | None],
    n_unscored: Sequence[int],
    context_depth: int,
) -> list[ResolvedRanking]:
    """One :class:`ResolvedRanking` per query, from the queries' first ranks (``n_gold[j]`` of
    ``first_list`` each, in order) and their out-of-scope ranks."""
    resolved = []
    g = 0
    extents: dict[int, tuple[float, ...]] = {}  # per result count: (1.0,) * its depth
    make = ResolvedRanking
    for j, n in enumerate(lengths_list):
        k = n_gold[j]
        ranks = out_ranks[j]
        extent = extents.get(n)
        if extent is None:
            extent = extents[n] = (1.0,) * min(n, context_depth)
        resolved.append(
            make(
                n,
                tuple(first_list[g : g + k]),
                {OUT_OF_SCOPE: ranks} if ranks else {},
                {},
                max_score[j],
                n_unscored[j],
                extent,
                unit_name,
            )
        )
        g += k
    return resolved


def _keys(
    run: RunColumns, samples: Sequence[Sample]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    names, key = run.sources, run.unit_key
    queries, sources, units, counts = [], [], [], []
    for j, sample in enumerate(samples):
        gold = sample.gold or ()
        counts.append(len(gold))
        for g in gold:
            queries.append(j)
            sources.append(names.get(g["source_id"], NO_SOURCE))
            units.append(g["region"][key] if key is not None else 0)
    return (
        np.asarray(queries, dtype=np.int64),
        np.asarray(sources, dtype=np.int64),
        np.asarray(units, dtype=np.int64),
        counts,
    )


MAX_GOLD_PASSES = 16  # gold regions per query matched by passes over the results, beyond: a sort


def _first_ranks(
    query: np.ndarray,
    source: np.ndarray,
    unit: np.ndarray,
    within: np.ndarray,
    valid: np.ndarray,
    gold_query: np.ndarray,
    gold_source: np.ndarray,
    gold_unit: np.ndarray,
) -> np.ndarray:
    """Per gold region: the 1-based rank of the first valid result of its query with its
    (source, unit), 0 when none."""
    first = np.zeros(len(gold_query), dtype=np.int64)
    if not len(gold_query) or not len(query):
        return first
    lo_u = min(int(unit.min()), int(gold_unit.min()))
    span_u = max(int(unit.max()), int(gold_unit.max())) - lo_u + 1
    span_s = max(int(source.max()), int(gold_source.max())) + 3  # sources from NO_SOURCE on
    per_query = np.bincount(gold_query, minlength=int(max(query[-1], gold_query.max())) + 1)
    if span_s * span_u >= 2**62 or int(per_query.max()) > MAX_GOLD_PASSES:
        return _first_ranks_sorted(
            query, source, unit, within, valid, gold_query, gold_source, gold_unit
        )
    item = (source + 2) * span_u + (unit - lo_u)  # one key per (source, unit)
    item[~valid] = -1  # flagged results hit nothing
    gold_item = (gold_source + 2) * span_u + (gold_unit - lo_u)
    # pass p matches the p-th gold region of every query against all of its results
    n_queries = len(per_query)
    order = np.argsort(gold_query, kind="stable")
    starts = np.concatenate(([0], np.cumsum(per_query)))
    slot = np.arange(len(gold_query)) - starts[gold_query[order]]
    for p in range(int(per_query.max())):
        mine = order[slot == p]  # gold indices that are their query's p-th
        wanted = np.full(n_queries, -2, dtype=np.int64)
        wanted[gold_query[mine]] = gold_item[mine]
        hits = np.flatnonzero(item == wanted[query])
        if not len(hits):
            continue
        hit_query = query[hits]
        lead = np.ones(len(hits), dtype=bool)
        lead[1:] = hit_query[1:] != hit_query[:-1]  # results are in query, then rank order
        rank = np.zeros(n_queries, dtype=np.int64)
        rank[hit_query[lead]] = within[hits[lead]] + 1
        first[mine] = rank[gold_query[mine]]
    return first


def _first_ranks_sorted(
    query: np.ndarray,
    source: np.ndarray,
    unit: np.ndarray,
    within: np.ndarray,
    valid: np.ndarray,
    gold_query: np.ndarray,
    gold_source: np.ndarray,
    gold_unit: np.ndarray,
) -> np.ndarray:
    """:func:`_first_ranks` by sorting the results' keys (many gold regions per query, or
    keys beyond int64)."""
    r_key, g_key = _combined(
        query[valid], source[valid], unit[valid], gold_query, gold_source, gold_unit
    )
    r_rank = within[valid] + 1
    order = np.lexsort((r_rank, r_key))  # by key, then rank: the first of each key hits
    r_key, r_rank = r_key[order], r_rank[order]
    fresh = np.ones(len(r_key), dtype=bool)
    fresh[1:] = r_key[1:] != r_key[:-1]
    r_key, r_rank = r_key[fresh], r_rank[fresh]
    first = np.zeros(len(g_key), dtype=np.int64)
    if len(r_key):
        at = np.minimum(np.searchsorted(r_key, g_key), len(r_key) - 1)
        match = r_key[at] == g_key
        first[match] = r_rank[at[match]]
    return first


def _combined(
    rq: np.ndarray, rs: np.ndarray, ru: np.ndarray, gq: np.ndarray, gs: np.ndarray, gu: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(query, source, unit) triples of results and gold as one comparable key each: an int64
    where the ranges allow it, else the rank of the triple among all of them."""
    lo_s = min(int(rs.min(initial=0)), int(gs.min(initial=0)))
    lo_u = min(int(ru.min(initial=0)), int(gu.min(initial=0)))
    span_s = max(int(rs.max(initial=0)), int(gs.max(initial=0))) - lo_s + 1
    span_u = max(int(ru.max(initial=0)), int(gu.max(initial=0))) - lo_u + 1
    span_q = max(int(rq.max(initial=0)), int(gq.max(initial=0))) + 1
    if span_q * span_s * span_u < 2**62:

        def key(q: np.ndarray, s: np.ndarray, u: np.ndarray) -> np.ndarray:
            return (q * span_s + (s - lo_s)) * span_u + (u - lo_u)

        return key(rq, rs, ru), key(gq, gs, gu)
    both = np.stack(
        [np.concatenate([rq, gq]), np.concatenate([rs, gs]), np.concatenate([ru, gu])], axis=1
    )
    _, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    return inverse[: len(rq)], inverse[len(rq) :]


def _score_summary(
    scores: np.ndarray, offsets: np.ndarray, lengths: np.ndarray
) -> tuple[list[float | None], list[int]]:
    m = len(lengths)
    null = np.isnan(scores)
    n_null = np.zeros(m, dtype=np.int64)
    best = np.full(m, np.nan)
    filled = lengths > 0
    if filled.any():
        starts = offsets[:-1][filled]
        n_null[filled] = np.add.reduceat(null.astype(np.int64), starts)
        best[filled] = np.fmax.reduceat(scores, starts)
    return [None if b != b else b for b in best.tolist()], n_null.tolist()


def _ranks_by_query(
    mask: np.ndarray, query: np.ndarray, within: np.ndarray, m: int
) -> list[tuple[int, ...]]:
    hit = np.flatnonzero(mask)
    if not len(hit):
        return [()] * m
    ranks = (within[hit] + 1).tolist()
    bounds = np.searchsorted(query[hit], np.arange(m + 1)).tolist()
    return [tuple(ranks[bounds[j] : bounds[j + 1]]) for j in range(m)]
