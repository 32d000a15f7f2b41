"""Your own retriever: the export of atoms and queries, a TREC run over the exported atoms
scored with `model=predictions`, and the Python route (a registered system) of
docs/retrieval.md."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from benchreg import RunOptions, load_task, run_task
from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.system import PerSampleSystem, SystemContext
from benchreg.core.types import Sample
from benchreg.families.retrieval.export import atoms_for, export, main

from .conftest import read_jsonl

FAST = RunOptions(progress=False, n_boot=0)


def test_export_writes_atoms_and_queries_without_gold(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    assert main(["--root", str(root), "--task", "retrieval/conversation", "--out", str(out)]) == 0
    atoms, queries = read_jsonl(out / "atoms.jsonl"), read_jsonl(out / "queries.jsonl")
    assert set(atoms[0]) == {"atom_id", "source_id", "region", "text", "observed_at", "holder",
                             "scope", "hidden_for"}
    assert len(queries) == 12 and all("gold" not in q and "answer" not in q for q in queries)
    assert {q["split"] for q in queries} == {"dev"}
    with pytest.raises(BenchregError, match="frozen"):
        export(root, "retrieval/conversation", out, view="test")
    assert export(root, "retrieval/conversation", out, view="test", final=True)[1] == 3


def test_a_trec_run_over_the_exported_atoms_is_scored(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    export(root, "retrieval/conversation", out)
    atoms = {a["atom_id"]: a for a in read_jsonl(out / "atoms.jsonl")}
    lines = []
    for q in read_jsonl(out / "queries.jsonl"):  # a toy retriever: shared words
        words = set(q["question"].lower().split())
        scored = sorted(((len(words & set(a["text"].lower().split())), i)
                         for i, a in atoms.items()), reverse=True)[:5]
        lines += [f"{q['query_id']} Q0 {i} {r} {s} toy" for r, (s, i) in enumerate(scored, 1)
                  if s > 0]
    run = tmp_path / "run.trec"
    run.write_text("\n".join(lines) + "\n", "utf-8")
    result = run_task(load_task("retrieval/conversation"), roots={"retrieval": str(root)},
                      system_cfg={"name": "predictions", "path": str(run),
                                  "params": {"atoms": str(out / "atoms.jsonl")}}, options=FAST)
    assert result.statuses["invalid"] == 0 and result.metrics["recall@10"].value > 0
    first = result.predictions[0].answer["results"][0]
    assert set(first) <= {"source_id", "region", "observed_at", "holder", "atom_id", "score"}


# --- the Python route, as docs/retrieval.md shows it ------------------------------------------


def word_overlap_retriever(cfg: Mapping[str, Any], ctx: SystemContext) -> PerSampleSystem:
    """A registered system: ranks the atoms of the run's data root by shared words, honouring
    each query's scope, holder and as_of as the resolver expects."""
    atoms = atoms_for(ctx, str(cfg.get("chunker", "default")))

    def answer(sample: Sample) -> dict[str, Any]:
        words = set(str(sample.input["question"]).lower().split())
        scope, holder = sample.meta.get("session"), sample.meta.get("holder")
        visible = [a for a in atoms if (scope is None or a.source_id == scope)
                   and (holder is None or a.holder in (None, holder))
                   and sample.id not in a.hidden_for]
        ranked = sorted(visible, key=lambda a: -len(words & set(a.text.lower().split())))
        return {"results": [{"source_id": a.source_id, "region": a.region,
                             "score": float(len(words & set(a.text.lower().split())))}
                            for a in ranked[:10]]}

    return PerSampleSystem("word_overlap", answer)


def test_the_python_route(root: Path) -> None:
    if "word_overlap" not in registry.systems:
        registry.systems.add("word_overlap", word_overlap_retriever)
    result = run_task(load_task("retrieval/conversation"), roots={"retrieval": str(root)},
                      system_cfg={"name": "word_overlap"}, options=FAST)
    assert result.statuses["ok"] == len(result.samples)
    assert result.metrics["recall@10"].value > 0.5
    assert result.metrics["context@10"].value == 1.0  # one turn per atom
    assert json.dumps(result.metrics["recall@10"].as_json())
