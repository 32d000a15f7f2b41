"""Retrieval floors: rankings that read no text, scored beside every system (core/floors.py).

On the real sources such rankings beat BM25 (the first 10 pages of a document hold much of
MMLongBench-Doc's evidence, the first screen elements much of UIBert's), so a score means
something only beside them:

- `first_10`: the first 10 units of each in-scope source, in position order: pages (1..10,
  counted from the manifest's `pages` when given, so pages without a text layer count too),
  screen elements, code symbols and line runs (the `symbol` chunker's order), conversation
  turns, images (one unit per image: its gold is the whole image); for video, 10 equal fixed
  windows of the clip (`duration` of the manifest row). Several in-scope sources (a query over
  every source) are interleaved: each source's first unit, then each one's second, ...;
- `random`: the units of every in-scope source (video: the same 10 windows) in an order drawn
  per query from the run's seed and the query id (reproducible, independent of sample order),
  cut at 100 results like the baseline. Code: the repository's files in a random order, each
  file's units in a random order within it (so that only the files drawn are parsed: cutting
  a whole checkout into symbols takes about a second per repository).

Code files are cut into units (the `symbol` chunker) one at a time, as far as a floor reads.

In scope: the query's own source when it is about one item (`scope.session`), else every source
of the modality; units of another holder, observed after `as_of` or hidden from the query are
left out, as the baseline leaves them out (the floors must not score on a leak).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from itertools import islice, pairwise
from typing import Any

import numpy as np

from benchreg.core.floors import Floor, FloorSet, floor_makers
from benchreg.core.system import SystemContext
from benchreg.core.types import Sample
from benchreg.families.retrieval.baseline import AtomStore
from benchreg.families.retrieval.chunkers import Atom, chunk
from benchreg.families.retrieval.corpus import Unit, read_code_files, source_file
from benchreg.families.retrieval.manifest import read_manifest
from benchreg.families.retrieval.records import ManifestRow
from benchreg.families.retrieval.times import parse_time

K = 10  # units per source for `first_10`, windows per clip for video
RANDOM_DEPTH = 100  # the baseline's default k
RANKING_METRICS = ("recall@10", "mrr", "mrr@10", "ndcg@10", "context@10")


class Units:
    """Each source's units in position order (as atoms: region, time, holder, hidden_for)."""

    def __init__(self, ctx: SystemContext) -> None:
        manifest = read_manifest(ctx.data_root)
        self.modality = str(ctx.task.loader.params.get("modality"))
        self.store = AtomStore(manifest, self.modality, "default", {})
        self._units: dict[str, list[Atom]] = {}
        self._files: dict[str, list[tuple[str, str]]] = {}
        self._file_units: dict[tuple[str, str], list[Atom]] = {}
        self._times: dict[str, float] = {}
        self._source_holders: dict[str, set[str | None]] = {}

    def has_units(self) -> bool:
        return any(next(self.iterate(source), None) is not None for source in self.store.rows)

    def iterate(self, source_id: str) -> Iterator[Atom]:
        """The source's units in position order; a code source's file by file, lazily."""
        if self.modality != "code":
            yield from self.of(source_id)
            return
        for file_path, _ in self.files(source_id):
            yield from self.file_units(source_id, file_path)

    def files(self, source_id: str) -> list[tuple[str, str]]:
        if source_id not in self._files:
            row = self.store.rows.get(source_id)
            path = source_file(row, self.store.manifest.corpus_dir) if row else None
            self._files[source_id] = list(read_code_files(path).items()) if path else []
        return self._files[source_id]

    def file_units(self, source_id: str, file_path: str) -> list[Atom]:
        key = (source_id, file_path)
        if key not in self._file_units:
            text = dict(self.files(source_id))[file_path]
            lines = [Unit({"path": file_path, "line": i}, t)
                     for i, t in enumerate(str(text).splitlines(), start=1)]
            self._file_units[key] = chunk(self.store.rows[source_id], lines, "default")
        return self._file_units[key]

    def of(self, source_id: str) -> list[Atom]:
        if source_id not in self._units:
            row = self.store.rows.get(source_id)
            self._units[source_id] = [] if row is None else self._read(row)
        return self._units[source_id]

    def _read(self, row: ManifestRow) -> list[Atom]:
        extra = row.model_extra or {}
        if self.modality == "video":
            return _windows(row, extra.get("duration"))
        if self.modality == "pdf" and isinstance(extra.get("pages"), int):
            return [_unit(row, {"page": p}) for p in range(1, extra["pages"] + 1)]
        atoms = self.store.of(row.source_id)
        if self.modality == "image":  # one unit per image, visible when any caption is
            hidden = frozenset.intersection(*(a.hidden_for for a in atoms)) if atoms else None
            return [_unit(row, {}, hidden or frozenset())] if atoms else []
        return atoms

    def sources(self, sample: Sample) -> list[str]:
        scope = sample.meta.get("session")
        if scope is not None:
            return [scope]
        holder = sample.meta.get("holder")
        if holder is None:
            return list(self.store.rows)
        # a query over every source sees its holder's only (LoCoMo: its conversation's
        # sessions); checking each unit of every conversation per query took seconds
        return [s for s in self.store.rows if self._holders(s) & {None, holder}]

    def _holders(self, source_id: str) -> set[str | None]:
        if source_id not in self._source_holders:
            self._source_holders[source_id] = {u.holder for u in self.of(source_id)}
        return self._source_holders[source_id]

    def visible(self, sample: Sample, unit: Atom) -> bool:
        """What the baseline would let the query see: its holder's (or no holder's) units,
        observed at or before `as_of` (or of unknown time), not hidden from it."""
        holder, as_of = sample.meta.get("holder"), sample.meta.get("as_of")
        if holder is not None and unit.holder not in (None, holder):
            return False
        late = as_of is not None and unit.observed_at is not None
        if late and self._time(str(unit.observed_at)) > self._time(str(as_of)):
            return False
        return sample.id not in unit.hidden_for

    def _time(self, text: str) -> float:
        if text not in self._times:
            self._times[text] = parse_time(text).timestamp()
        return self._times[text]

    def heads(self, sample: Sample) -> list[list[Atom]]:
        """The first K visible units of each in-scope source."""
        out = []
        for source in self.sources(sample):
            head = list(islice((u for u in self.iterate(source) if self.visible(sample, u)), K))
            if head:
                out.append(head)
        return out

    def shuffled(self, sample: Sample, rng: np.random.Generator) -> list[Atom]:
        """Up to RANDOM_DEPTH visible units of the in-scope sources in a random order."""
        if self.modality != "code":
            pool = [u for s in self.sources(sample) for u in self.of(s) if self.visible(sample, u)]
            return [pool[i] for i in rng.permutation(len(pool))[:RANDOM_DEPTH]]
        out: list[Atom] = []
        for source in self.sources(sample):
            files = self.files(source)
            for f in rng.permutation(len(files)):
                units = [u for u in self.file_units(source, files[f][0])
                         if self.visible(sample, u)]
                out += [units[i] for i in rng.permutation(len(units))]
                if len(out) >= RANDOM_DEPTH:
                    return out[:RANDOM_DEPTH]
        return out


def _unit(row: ManifestRow, region: dict[str, Any], hidden: frozenset[str] = frozenset()) -> Atom:
    return Atom(row.source_id, row.source_id, region, "", row.observed_at, row.holder, hidden)


def _windows(row: ManifestRow, duration: Any) -> list[Atom]:
    if not isinstance(duration, int | float) or duration <= 0:
        return []
    edges = np.linspace(0.0, float(duration), K + 1)
    return [_unit(row, {"t_start": float(a), "t_end": float(b)})
            for a, b in pairwise(edges)]


def _answer(ranked: Sequence[Atom]) -> dict[str, Any]:
    # descending scores keep the order for readers that sort by score (TREC: ties by docno)
    return {"results": [{"source_id": u.source_id, "region": dict(u.region),
                         "score": float(len(ranked) - i)} for i, u in enumerate(ranked)]}


def first_k(units: Units) -> Floor:
    def answer(sample: Sample) -> dict[str, Any]:
        heads = units.heads(sample)
        # interleaved: every source's first unit before any source's second
        ranked = [head[i] for i in range(K) for head in heads if i < len(head)]
        return _answer(ranked)

    what = ("the first 10 units of each in-scope source (pages, elements, symbols, turns, "
            "images; video: 10 equal fixed windows of the clip), reading no text")
    return Floor(answer, what)


def random_ranking(units: Units, seed: int) -> Floor:
    def answer(sample: Sample) -> dict[str, Any]:
        rng = np.random.default_rng([seed, zlib.crc32(sample.id.encode("utf-8"))])
        return _answer(units.shuffled(sample, rng))

    what = (f"the in-scope units in a random order (seed {seed} and the query id), "
            f"cut at {RANDOM_DEPTH}")
    return Floor(answer, what)


@floor_makers.register("retrieval")
def retrieval_floors(ctx: SystemContext) -> FloorSet | None:
    """The floors of a retrieval run; None when no source of the modality has units (no corpus
    and, for video, no duration): a floor of zeros would say nothing."""
    units = Units(ctx)
    if not units.has_units():
        return None
    seed = int((ctx.options or {}).get("seed", 0))
    return FloorSet({"first_10": first_k(units), "random": random_ranking(units, seed)},
                    RANKING_METRICS)
