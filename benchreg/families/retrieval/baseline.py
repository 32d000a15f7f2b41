"""The offline baseline `bm25`: BM25 (bm25s) over the atoms of the modality's manifest sources.

Params: `chunker` (see chunkers.py; `default` = the modality's natural unit) with `size` /
`stride` for `window`; `k` results (100); `min_score` (results must score above it: 0.0 drops
atoms sharing no term with the question); `min_relevance` (results must have a relevance,
score / the query's best possible score in the index (bm25.py), above it: the baseline abstains
on weak evidence, which is what false recall measures; unset = the value chosen on the dev split
of the run's data set and recorded in abstention.py, else 0.0); `filter_holder` (true: only
atoms of the query's holder or of no holder) and `filter_as_of` (true: only atoms observed at
or before `as_of`, or of unknown time);
`honour_scope` (true: a query about one item, `scope.session`, is answered from that source's
atoms alone, with an index of its own: the literature's within-document / within-screen /
within-commit setting). With the filters off the temporal and holder metrics show the leaks.
`full_ranking` (default: true for ui_screenshot only): after the atoms sharing a term with the
question, the other visible atoms follow in corpus order with score 0, up to `k`. A screen's
elements are a few words each (many none: icons, images), so BM25 alone returned about 1.45
of a screen's elements per UIBert query and ranked nothing else; a grounding answer must rank
the whole screen. Not applied while abstention is on (`min_relevance` > 0): an entry left
without results abstains, which is what false recall measures.

An atom hidden from an entry (corpus `hidden_for`: a COCO caption is its own entry's question)
is never returned for it. A modality whose corpus yields no atom at all (no source has a text
file: QVHighlights videos) stops the run with one line saying so: nothing is scored as zero.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.system import SystemContext
from benchreg.core.types import Prediction, Sample
from benchreg.families.retrieval.bm25 import BM25Index, tokenize
from benchreg.families.retrieval.chunkers import Atom, chunk
from benchreg.families.retrieval.corpus import read_units
from benchreg.families.retrieval.manifest import Manifest, read_manifest
from benchreg.families.retrieval.records import ManifestRow
from benchreg.families.retrieval.times import parse_time

OWN_SYSTEM = (
    "score your own system's results instead: model=predictions model.path=<run.jsonl> "
    "(docs/retrieval.md, 'Your own retriever')"
)


class AtomStore:
    """The atoms of a modality's sources, cut once per source when first needed."""

    def __init__(self, manifest: Manifest, modality: str, chunker: str,
                 params: dict[str, Any]) -> None:
        self.manifest, self.modality = manifest, modality
        self.chunker, self.params = chunker, params
        self.rows: dict[str, ManifestRow] = {
            sid: row for sid, row in manifest.rows.items() if row.modality == modality
        }
        self._atoms: dict[str, list[Atom]] = {}

    def of(self, source_id: str) -> list[Atom]:
        if source_id not in self._atoms:
            row = self.rows.get(source_id)
            units = read_units(row, self.manifest.corpus_dir) if row is not None else []
            self._atoms[source_id] = (
                chunk(row, units, self.chunker, **self.params) if row is not None else []
            )
        return self._atoms[source_id]

    def everything(self) -> list[Atom]:
        return [a for sid in self.rows for a in self.of(sid)]


def build_atoms(ctx: SystemContext, chunker: str, **chunk_params: Any) -> list[Atom]:
    """Every atom of the task's modality under ``chunker`` (what `export` writes)."""
    manifest = read_manifest(ctx.data_root)
    store = AtomStore(manifest, str(ctx.task.loader.params.get("modality")), chunker,
                      chunk_params)
    return store.everything()


class ScopedIndex:
    """A BM25 index over some atoms, with what the per-query visibility needs as arrays."""

    def __init__(self, atoms: list[Atom]) -> None:
        self.atoms = atoms
        self.index = BM25Index([a.text for a in atoms])
        holders = sorted({a.holder for a in atoms if a.holder is not None})
        self._holder_code = {h: i + 1 for i, h in enumerate(holders)}
        self.holders = np.array([self._holder_code.get(a.holder, 0) if a.holder else 0
                                 for a in atoms], dtype=np.int64)
        self.times = np.array([parse_time(a.observed_at).timestamp() if a.observed_at
                               else np.nan for a in atoms], dtype=float)
        self.hidden: dict[str, list[int]] = {}
        for i, a in enumerate(atoms):
            for query_id in a.hidden_for:
                self.hidden.setdefault(query_id, []).append(i)

    def visible(self, sample: Sample, holder: bool, as_of: bool) -> np.ndarray:
        visible = np.ones(len(self.atoms), dtype=bool)
        query_holder, query_time = sample.meta.get("holder"), sample.meta.get("as_of")
        if holder and query_holder is not None:
            code = self._holder_code.get(query_holder, -1)
            visible &= (self.holders == 0) | (self.holders == code)
        if as_of and query_time is not None:
            limit = parse_time(query_time).timestamp()
            visible &= np.isnan(self.times) | (self.times <= limit)
        hidden = self.hidden.get(sample.id)
        if hidden:
            visible[hidden] = False
        return visible


def _visibility(atoms: Sequence[Atom], sample: Sample, holder: bool, as_of: bool) -> np.ndarray:
    """Which atoms a query may see (holder, time and `hidden_for` filters)."""
    visible = np.ones(len(atoms), dtype=bool)
    query_holder, query_time = sample.meta.get("holder"), sample.meta.get("as_of")
    if holder and query_holder is not None:
        visible &= np.array([a.holder in (None, query_holder) for a in atoms], dtype=bool)
    if as_of and query_time is not None:
        limit = parse_time(query_time)
        visible &= np.array(
            [a.observed_at is None or parse_time(a.observed_at) <= limit for a in atoms],
            dtype=bool,
        )
    visible &= np.array([sample.id not in a.hidden_for for a in atoms], dtype=bool)
    return visible


def _no_corpus(ctx: SystemContext, modality: str, store: AtomStore) -> BenchregError:
    with_file = sum(1 for row in store.rows.values() if row.path is not None)
    if not with_file:
        problem = (f"{ctx.task.name}: none of the {len(store.rows)} {modality} sources of this "
                   "data root has a text corpus (the manifest gives no file), so the BM25 "
                   "baseline has nothing to rank")
    else:
        problem = (f"{ctx.task.name}: the corpus of the {with_file} {modality} sources with a "
                   "file yields no atom to rank")
    return BenchregError(f"{problem}; {OWN_SYSTEM}", where=store.manifest.path)


@registry.baselines.register("bm25")
def make_bm25(
    ctx: SystemContext,
    chunker: str = "default",
    k: int = 100,
    min_score: float = 0.0,
    min_relevance: float | None = None,
    filter_holder: bool = True,
    filter_as_of: bool = True,
    honour_scope: bool = True,
    size: int | None = None,
    stride: int | None = None,
    full_ranking: bool | None = None,
) -> Callable[[Sample], Prediction]:
    manifest = read_manifest(ctx.data_root)
    modality = str(ctx.task.loader.params.get("modality"))
    store = AtomStore(manifest, modality, chunker, {"size": size, "stride": stride})
    if not any(row.path is not None for row in store.rows.values()):
        raise _no_corpus(ctx, modality, store)
    relevance = _min_relevance(ctx.samples, chunker, min_relevance)
    index_for = _indexes(ctx, modality, store, honour_scope)
    fill = (modality == "ui_screenshot" if full_ranking is None else bool(full_ranking))
    fill = fill and relevance <= 0.0

    def answer(sample: Sample) -> Prediction:
        tic = time.perf_counter()
        scope = sample.meta.get("session") if honour_scope else None
        scoped = index_for(scope)
        visible = scoped.visible(sample, filter_holder, filter_as_of)
        question = str(sample.input["question"])
        found = scoped.index.search(question, int(k), visible, float(min_score), relevance)
        if fill:
            found = _filled(found, visible, int(k))
        results = _results(scoped.atoms, found)
        latency = time.perf_counter() - tic
        return Prediction(
            sample.id,
            answer={"results": results, "latency_s": latency},
            latency_s=latency,
            metadata={"chunker": chunker, "atoms": len(scoped.atoms),
                      "scope": scope if scope is not None else "all",
                      "min_relevance": relevance,
                      "score_bound": scoped.index.bound(
                          tokenize(question, scoped.index.stopwords))},
        )

    return answer


def _min_relevance(
    samples: Sequence[Sample], chunker: str, min_relevance: float | None
) -> float:
    """The param, else the value chosen on the dev split of the samples' dataset."""
    from benchreg.families.retrieval.abstention import chosen_min_relevance

    datasets = {(s.meta.get("origin") or {}).get("dataset") for s in samples}
    dataset = datasets.pop() if len(datasets) == 1 else None
    if min_relevance is None:
        return chosen_min_relevance(dataset, chunker)
    return float(min_relevance)


def _indexes(
    ctx: SystemContext, modality: str, store: AtomStore, honour_scope: bool
) -> Callable[[str | None], ScopedIndex]:
    """The index of a scope (a source, or None: every atom), built once; every index a query
    will ask for is built here, before the first question (latency is answering, not
    indexing), and a corpus that yields nothing fails here."""
    indexes: dict[str | None, ScopedIndex] = {}

    def index_for(scope: str | None) -> ScopedIndex:
        if scope not in indexes:
            atoms = store.of(scope) if scope is not None else store.everything()
            if scope is None and not atoms:
                raise _no_corpus(ctx, modality, store)
            indexes[scope] = ScopedIndex(atoms)
        return indexes[scope]

    if not any(s.meta.get("session") for s in ctx.samples) or not honour_scope:
        index_for(None)
    else:
        for scope in dict.fromkeys(s.meta.get("session") for s in ctx.samples):
            index_for(scope)
    return index_for


def _filled(
    found: list[tuple[int, float]], visible: np.ndarray, k: int
) -> list[tuple[int, float]]:
    """``found`` followed by the other visible atoms in corpus order, score 0, up to ``k``."""
    taken = {i for i, _ in found}
    rest = (int(i) for i in np.flatnonzero(visible) if int(i) not in taken)
    return found + [(i, 0.0) for i, _ in zip(rest, range(k - len(found)), strict=False)]


def _results(atoms: Sequence[Atom], found: Sequence[tuple[int, float]]) -> list[dict[str, Any]]:
    return [
        {
            "source_id": atoms[i].source_id,
            "region": atoms[i].region,
            "score": score,
            "observed_at": atoms[i].observed_at,
            "holder": atoms[i].holder,
            "atom_id": atoms[i].atom_id,
        }
        for i, score in found
    ]
