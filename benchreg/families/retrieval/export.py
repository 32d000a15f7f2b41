"""Evaluate your own retriever: export the atoms of a chunker and the queries of a split.

    python -m benchreg.families.retrieval.export --root <data root> --task retrieval/pdf \\
        [--view dev] [--set NAME] [--chunker default] [--size N --stride N] [--final] \\
        --out <folder>

writes `<folder>/atoms.jsonl` (one atom per line: `atom_id, source_id, region, text,
observed_at, holder, scope: {session}, hidden_for`) and `<folder>/queries.jsonl` (`query_id,
question, modality, scope, as_of, answer_format, split`; never the gold). Any retriever can
rank the atoms for each query outside benchreg; its run is then scored with
`model=predictions model.path=<run>`: a JSON Lines run (`{"query_id", "results": [{source_id,
region, score}, ...]}`) or a TREC run (`qid Q0 atom_id rank score tag`) read with the exported
atoms file (`model.params.atoms=<folder>/atoms.jsonl`). Honour each query's scope and visibility
as the BM25 baseline does: answer a query with `scope.session` from that source's atoms, skip
atoms of another holder (`scope.holder`), observed after `as_of`, or hidden from the query
(`hidden_for`): the resolver flags such results and never counts them as hits.

A root whose entries of the task's modality come from two datasets in two set files (e.g.
SWE-bench Lite and CodeSearchNet, both `code`) needs `--set NAME` (a set file stem,
`sets/NAME.jsonl`) to export one; without it the export stops with one line listing them.

The test split is frozen: exporting its queries needs `--final` (final acceptance only), as a
run does (`run.final=true`).

The Python route (a system registered in `benchreg.core.registry.systems`, run in-process) is
:func:`atoms_for` plus the system contract: docs/retrieval.md, "Your own retriever".
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchreg.core.errors import BenchregError
from benchreg.core.reader import json_lines
from benchreg.core.system import SystemContext
from benchreg.families.retrieval.baseline import build_atoms
from benchreg.families.retrieval.chunkers import Atom
from benchreg.families.retrieval.loader import set_files


def atoms_for(ctx: SystemContext, chunker: str = "default", **params: Any) -> list[Atom]:
    """Every atom of the run's modality (the task's data root) under ``chunker``."""
    return build_atoms(ctx, chunker, **params)


def atom_record(atom: Atom) -> dict[str, Any]:
    return {"atom_id": atom.atom_id, "source_id": atom.source_id, "region": atom.region,
            "text": atom.text, "observed_at": atom.observed_at, "holder": atom.holder,
            "scope": {"session": atom.source_id}, "hidden_for": sorted(atom.hidden_for)}


def query_record(sample: Any) -> dict[str, Any]:
    return {"query_id": sample.id, "question": sample.input["question"],
            "modality": sample.input["modality"], "scope": sample.input["scope"],
            "as_of": sample.input["as_of"], "answer_format": sample.input["answer_format"],
            "split": sample.meta["split"]}


def sets_holding(root: Path, modality: str) -> dict[str, set[str]]:
    """Set file stem -> the datasets (`origin.dataset`) of its entries of ``modality``, for the
    set files that hold any."""
    out: dict[str, set[str]] = {}
    for path in set_files(root, None):
        for _, row, _ in json_lines(path):
            if isinstance(row, dict) and row.get("modality") == modality:
                origin = row.get("origin")
                dataset = origin.get("dataset") if isinstance(origin, dict) else None
                out.setdefault(path.stem, set()).add(str(dataset))
    return out


def choose_set(root: Path, modality: str, chosen: str | None) -> str | None:
    """The set file to export (``--set``), checked to hold entries of ``modality``; None when
    the root's entries of it come from one dataset. Two datasets without a choice: one error
    listing the set files to choose from (one export would mix two benchmarks)."""
    holding = sets_holding(root, modality)
    listing = ", ".join(f"{stem} ({', '.join(sorted(ds))})" for stem, ds in sorted(holding.items()))
    if chosen is None:
        datasets = set().union(*holding.values()) if holding else set()
        if len(holding) > 1 and len(datasets) > 1:
            raise BenchregError(
                f"the {modality} entries come from {len(datasets)} datasets in "
                f"{len(holding)} set files: one export would mix them",
                where=root / "sets", fix=f"pick one with --set NAME; set files: {listing}",
            )
        return None
    if chosen not in holding:
        nearest = difflib.get_close_matches(chosen, list(holding), n=1, cutoff=0.4)
        hint = f"; did you mean {nearest[0]}?" if nearest else ""
        raise BenchregError(
            f"{chosen!r} is not a set file of {root / 'sets'} holding {modality} entries{hint}",
            where="--set", fix=f"set files with {modality} entries: {listing or 'none'}",
        )
    return chosen


def export(root: Path, task_name: str, out: Path, *, view: str = "dev",
           chunker: str = "default", final: bool = False, set_name: str | None = None,
           **params: Any) -> tuple[int, int]:
    """Write atoms.jsonl and queries.jsonl; (atoms, queries)."""
    from benchreg.core.pipeline import load_dataset
    from benchreg.core.task import load_task

    if out.exists() and not out.is_dir():
        raise BenchregError("--out is an existing file, not a folder; it is not replaced",
                            where=out, fix="pass --out a folder (new or existing)")
    task = load_task(task_name)
    root = root.resolve()
    modality = str(task.loader.params.get("modality", ""))
    chosen = choose_set(root, modality, set_name)
    if chosen is not None:
        loader_params = {**task.loader.params, "sets": [chosen]}
        task = task.evolve(loader={"name": task.loader.name, "params": loader_params})
    dataset = load_dataset(task, view, root, final=final)
    ctx = SystemContext(task, view, root, dataset.samples)
    atoms = atoms_for(ctx, chunker, **params)
    if not atoms:
        raise BenchregError(f"{task_name}: the corpus yields no atom under chunker {chunker!r}",
                            where=root)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "atoms.jsonl", "w", encoding="utf-8") as handle:
        for atom in atoms:
            handle.write(json.dumps(atom_record(atom), ensure_ascii=False) + "\n")
    with open(out / "queries.jsonl", "w", encoding="utf-8") as handle:
        for sample in dataset.samples:
            handle.write(json.dumps(query_record(sample), ensure_ascii=False) + "\n")
    return len(atoms), len(dataset.samples)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchreg.families.retrieval.export",
        description="Export a chunker's atoms and a split's queries for your own retriever.")
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--task", required=True, help="e.g. retrieval/conversation")
    parser.add_argument("--view", default="dev", choices=("dev", "test"))
    parser.add_argument("--set", dest="set_name", default=None, metavar="NAME",
                        help="the set file (sets/NAME.jsonl) to export, where the root holds "
                        "entries of the task's modality from two datasets")
    parser.add_argument("--chunker", default="default")
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--stride", type=int, default=None)
    parser.add_argument("--final", action="store_true",
                        help="final acceptance: the frozen test split may be read")
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    try:
        atoms, queries = export(args.root, args.task, args.out, view=args.view,
                                chunker=args.chunker, final=args.final,
                                set_name=args.set_name, size=args.size, stride=args.stride)
    except BenchregError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write the export ({exc.strerror or type(exc).__name__}) at "
              f"{exc.filename or args.out} (pass --out a folder you can write)", file=sys.stderr)
        return 2
    print(f"wrote {atoms} atoms to {args.out / 'atoms.jsonl'} and {queries} queries to "
          f"{args.out / 'queries.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
