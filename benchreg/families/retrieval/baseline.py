"""The offline baseline `bm25`: BM25 (bm25s) over the atoms of the modality's manifest sources.

Params: `chunker` (see chunkers.py; `default` = the modality's natural unit) with `size` /
`stride` for `window`; `k` results (100); `min_score` (results must score above it, 0.0 drops
atoms sharing no term with the question); `filter_holder` (true: only atoms of the query's
holder or of no holder) and `filter_as_of` (true: only atoms observed at or before `as_of`, or
of unknown time). With the filters off the temporal and holder metrics show the leaks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchreg.core import registry
from benchreg.core.system import SystemContext
from benchreg.core.types import Prediction, Sample
from benchreg.families.retrieval.bm25 import BM25Index
from benchreg.families.retrieval.chunkers import Atom, chunk
from benchreg.families.retrieval.corpus import read_units
from benchreg.families.retrieval.manifest import read_manifest
from benchreg.families.retrieval.times import parse_time


def build_atoms(ctx: SystemContext, chunker: str, **chunk_params: Any) -> list[Atom]:
    manifest = read_manifest(ctx.data_root)
    modality = ctx.task.loader.params.get("modality")
    atoms: list[Atom] = []
    for row in manifest.rows.values():
        if row.modality == modality:
            atoms += chunk(row, read_units(row, manifest.corpus_dir), chunker, **chunk_params)
    return atoms


def _visibility(atoms: list[Atom], sample: Sample, holder: bool, as_of: bool) -> np.ndarray:
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
    return visible


@registry.baselines.register("bm25")
def make_bm25(
    ctx: SystemContext,
    chunker: str = "default",
    k: int = 100,
    min_score: float = 0.0,
    filter_holder: bool = True,
    filter_as_of: bool = True,
    size: int | None = None,
    stride: int | None = None,
) -> Callable[[Sample], Prediction]:
    atoms = build_atoms(ctx, chunker, size=size, stride=stride)
    index = BM25Index([a.text for a in atoms])

    def answer(sample: Sample) -> Prediction:
        tic = time.perf_counter()
        visible = _visibility(atoms, sample, filter_holder, filter_as_of)
        found = index.search(str(sample.input["question"]), int(k), visible, float(min_score))
        results = [
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
        latency = time.perf_counter() - tic
        return Prediction(
            sample.id,
            answer={"results": results, "latency_s": latency},
            latency_s=latency,
            metadata={"chunker": chunker, "atoms": len(atoms)},
        )

    return answer
