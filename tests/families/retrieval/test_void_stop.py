"""Issue 37 item 6: where nothing can be scored the run stops with one line that counts the void
entries by reason and names the first; `allow_void: true` runs anyway and marks every output
"not a benchmark result"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchreg import RunOptions, load_task, run_task
from benchreg.core.errors import BenchregError
from benchreg.core.outputs import write_run
from benchreg.core.pipeline import load_dataset
from benchreg.core.summary import run_table
from benchreg.core.validation import Finding
from benchreg.families.retrieval.annotations import CODESEARCHNET
from benchreg.families.retrieval.validators import void_reason

from .conftest import read_jsonl, write_jsonl
from .test_validators import RULES

FAST = RunOptions(progress=False, n_boot=0)


def spec_with(modality: str, **params: Any):  # type: ignore[no-untyped-def]
    return load_task(f"retrieval/{modality}").evolve(
        loader={"name": "retrieval", "params": {"modality": modality, **params}})


def unregister_gold(root: Path, count: int) -> None:
    """The first ``count`` answerable pdf dev entries cite a source whose annotation is not
    registered (one source per entry: a copy of its row under another name)."""
    path = root / "sets" / "pdf.jsonl"
    entries = read_jsonl(path)
    manifest = read_jsonl(root / "corpus" / "manifest.jsonl")
    by_id = {r["source_id"]: r for r in manifest}
    done = 0
    for entry in entries:
        if done == count or entry["split"] != "dev" or not entry["gold"]:
            continue
        row = dict(by_id[entry["gold"][0]["source_id"]])
        row.update(source_id=f"unregistered-{done}", annotation_source="my-lab:unregistered")
        manifest.append(row)
        entry["gold"][0]["source_id"] = row["source_id"]
        done += 1
    write_jsonl(path, entries)
    write_jsonl(root / "corpus" / "manifest.jsonl", manifest)


def test_one_void_entry_of_twelve_is_dropped_and_the_run_goes_on(root: Path) -> None:
    unregister_gold(root, 1)
    dataset = load_dataset(spec_with("pdf"), "dev", root)
    assert len(dataset.samples) == 11 and "benchmark_result" not in dataset.info


def test_more_than_a_tenth_void_stops_with_one_line(root: Path) -> None:
    unregister_gold(root, 2)
    with pytest.raises(BenchregError) as caught:
        load_dataset(spec_with("pdf"), "dev", root)
    line = str(caught.value)
    assert "\n" not in line
    assert line.startswith(
        "2 of 12 entries are void (by reason: annotation not registered 2); first: ")
    assert "sets/pdf.jsonl:1 (annotation not registered)" in line
    assert "allow_void=true" in line and "more than 10% of the entries are void" in line
    # the share is a param: 2 of 12 is below a quarter
    assert len(load_dataset(spec_with("pdf", max_void_share=0.25), "dev", root).samples) == 10


def test_every_reason_is_counted(root: Path, edit_entry) -> None:  # type: ignore[no-untyped-def]
    unregister_gold(root, 2)
    edit_entry("pdf", 5, lambda e: e.update(as_of="last tuesday"))
    with pytest.raises(BenchregError, match=r"^3 of 12 entries are void \(by reason: "
                       r"annotation not registered 2, bad as_of 1\); first: "):
        load_dataset(spec_with("pdf"), "dev", root)


def test_allow_void_runs_and_marks_every_output(root: Path, tmp_path: Path) -> None:
    unregister_gold(root, 2)
    result = run_task(spec_with("pdf", allow_void=True), roots={"retrieval": str(root)},
                      options=FAST)
    note = "2 of 12 entries are void (by reason: annotation not registered 2); first: "
    assert any(w.startswith("not a benchmark result: " + note) for w in result.dataset.warnings)
    record = write_run(tmp_path / "run", result, {})
    written = json.loads((tmp_path / "run" / "metrics.json").read_text("utf-8"))
    assert written["benchmark_result"] is False and written["not_a_result"].startswith(note)
    assert "NOT A BENCHMARK RESULT: " + note in run_table(record)


def add_codesearchnet(root: Path) -> None:
    """A second code dataset whose sources have no corpus file (as CodeSearchNet's), beside the
    sample's code corpus: a combined root."""
    revision = CODESEARCHNET.revisions[0]
    manifest = read_jsonl(root / "corpus" / "manifest.jsonl")
    manifest.append({"source_id": "octo/repo@abc", "modality": "code", "dataset": "CodeSearchNet",
                     "revision": revision, "license": "MIT",
                     "annotation_source": CODESEARCHNET.name})
    write_jsonl(root / "corpus" / "manifest.jsonl", manifest)
    origin = {"dataset": "CodeSearchNet", "revision": revision, "item": "q", "license": "MIT"}
    entry = {"modality": "code", "question": "parse a date", "answer": None,
             "answer_format": "none", "scope": {"holder": None, "session": None,
                                               "scenario": None},
             "as_of": None, "origin": origin, "split": "dev"}
    write_jsonl(root / "sets" / "codesearchnet.jsonl", [
        {**entry, "query_id": "csn-0", "unanswerable": False,
         "gold": [{"source_id": "octo/repo@abc", "region": {"path": "a.py", "line": 3}}]},
        {**entry, "query_id": "csn-1", "unanswerable": True, "gold": []},
    ])


def test_queries_without_a_corpus_of_their_own_stop(root: Path) -> None:
    add_codesearchnet(root)
    with pytest.raises(BenchregError) as caught:
        load_dataset(spec_with("code", sets=["codesearchnet"]), "dev", root)
    line = str(caught.value)
    assert line.startswith("2 of 2 entries are void (by reason: no corpus for its source 2); "
                           "first: ")
    assert "sets/codesearchnet.jsonl:1 (no corpus for its source)" in line
    assert "loader_params.sets" in line and "\n" not in line
    # the sample's own code entries still have their corpus
    assert load_dataset(spec_with("code", sets=["code"]), "dev", root).samples


def test_a_modality_with_no_corpus_at_all_is_not_void(root: Path) -> None:
    """Only CodeSearchNet in the root: no code corpus at all, so nothing ranks the wrong code;
    a predictions file is still scored (and the baseline stops on its own)."""
    add_codesearchnet(root)
    manifest = read_jsonl(root / "corpus" / "manifest.jsonl")
    write_jsonl(root / "corpus" / "manifest.jsonl",
                [r for r in manifest if r["modality"] != "code" or "path" not in r])
    dataset = load_dataset(spec_with("code", sets=["codesearchnet"]), "dev", root)
    assert [s.id for s in dataset.samples] == ["csn-0", "csn-1"]


@pytest.mark.parametrize(("modality", "change", "needle"), RULES)
def test_every_rule_has_a_reason(root: Path, edit_entry, modality: str, change,  # type: ignore[no-untyped-def]
                                 needle: str) -> None:
    edit_entry(modality, 0, change)
    void = load_dataset(spec_with(modality), "dev", root).info["void"]
    reason = void_reason(void[0])
    assert reason != "malformed entry" or needle in ("answer_format", "origin"), void[0]


def test_reason_of_another_modality() -> None:
    finding = Finding("sets/pdf.jsonl:1", "pdf-00: gold[0]: source 'x' is code, not pdf", "error")
    assert void_reason(finding) == "gold source of another modality"
