"""Every rule of spec 004 sections 2-3: a violating entry is void, named by file:line and
query_id; the validator also checks manifest sha256 and the unanswerable share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from benchreg.core.errors import BenchregError
from benchreg.core.pipeline import load_context, load_dataset, run_validators
from benchreg.core.task import load_task
from benchreg.families.retrieval.regions import region_problem

from .conftest import read_jsonl, write_jsonl


def findings(root: Path, modality: str = "pdf") -> list[str]:
    spec = load_task(f"retrieval/{modality}")
    dataset = load_dataset(spec, "dev", root)
    return [str(f) for f in run_validators(spec, dataset, load_context(spec, "dev", root))]


def only_void(root: Path, modality: str, needle: str) -> str:
    found = [f for f in findings(root, modality) if needle in f]
    assert len(found) == 1, findings(root, modality)
    assert f"sets/{modality}.jsonl:" in found[0]
    return found[0]


RULES: list[tuple[str, Callable[[dict], None], str]] = [
    ("pdf", lambda e: e["gold"][0].update(region={"line": 3}), "pdf region must be"),
    ("pdf", lambda e: e["gold"][0].update(region={}), "whole-file gold is not allowed"),
    ("code", lambda e: e["gold"][0].update(region={"path": "toolkit/mod0.py"}),
     "whole-file gold is not allowed"),
    ("video", lambda e: e["gold"][0].update(region={}), "whole-file gold is not allowed"),
    ("ui_screenshot", lambda e: e["gold"][0]["region"].update(bbox=[5, 5, 1, 9]), "no area"),
    ("video", lambda e: e["gold"][0].update(region={"t_start": 8.0, "t_end": 2.0}),
     "0 <= t_start < t_end"),
    ("pdf", lambda e: e["gold"][0].update(region={"page": 0}), "page must be an integer >= 1"),
    ("pdf", lambda e: e.update(unanswerable=True, answer=None, answer_format="none"),
     "unanswerable entry must have empty gold"),
    ("pdf", lambda e: e.update(unanswerable=True, gold=[], answer="x"),
     "must have answer null"),
    ("pdf", lambda e: e.update(gold=[]), "answerable entry needs at least one gold"),
    ("pdf", lambda e: e["gold"][0].update(source_id="nowhere"), "not in the manifest"),
    ("pdf", lambda e: e["gold"][0].update(source_id="sample-code-0"), "is code, not pdf"),
    ("pdf", lambda e: e["origin"].update(revision="0000"), "not in the corpus manifest"),
    ("pdf", lambda e: e["origin"].update(dataset="Other"), "not in the corpus manifest"),
    ("pdf", lambda e: e.update(split="val"), "unknown split 'val'"),
    ("pdf", lambda e: e.update(as_of="last tuesday"), "not an ISO 8601 time"),
    ("pdf", lambda e: e.update(as_of="2024-06-01T00:00:00"), "has no UTC offset"),
    ("pdf", lambda e: e.update(as_of="2023-01-01T00:00:00+00:00"), "after as_of"),
    ("pdf", lambda e: e.update(modality="pdf", answer_format="text"), "answer_format"),
    ("pdf", lambda e: e.pop("origin"), "origin"),
]


@pytest.mark.parametrize(("modality", "change", "needle"), RULES)
def test_rule(root: Path, edit_entry, modality: str, change, needle: str) -> None:  # type: ignore[no-untyped-def]
    edit_entry(modality, 0, change)
    message = only_void(root, modality, needle)
    assert f"{modality}-00" in message


def test_duplicate_query_id(root: Path) -> None:
    path = root / "sets" / "pdf.jsonl"
    rows = read_jsonl(path)
    write_jsonl(path, [*rows, rows[0]])
    message = only_void(root, "pdf", "duplicate query_id")
    assert "pdf-00" in message and "first at" in message


def test_void_entries_are_dropped_or_stop_the_run(root: Path, edit_entry) -> None:  # type: ignore[no-untyped-def]
    edit_entry("pdf", 0, lambda e: e.update(split="val"))
    spec = load_task("retrieval/pdf")
    assert "pdf-00" not in {s.id for s in load_dataset(spec, "dev", root).samples}
    strict = spec.evolve(loader={"name": spec.loader.name,
                                 "params": {"modality": "pdf", "void_entries": "error"}})
    with pytest.raises(BenchregError, match="pdf-00"):
        load_dataset(strict, "dev", root)


def test_manifest_sha256_is_checked(root: Path) -> None:
    (root / "corpus" / "pdf" / "report_0.txt").write_text("changed", "utf-8")
    (root / "corpus" / "pdf" / "report_1.txt").unlink()
    found = findings(root)
    assert any("sha256 of pdf/report_0.txt" in f for f in found)
    assert any("pdf/report_1.txt not found" in f for f in found)


def test_unanswerable_share_below_target(root: Path) -> None:
    path = root / "sets" / "pdf.jsonl"
    write_jsonl(path, [r for r in read_jsonl(path) if not r["unanswerable"]])
    assert any("unanswerable share 0/9" in f for f in findings(root))
    assert not any("unanswerable share" in f for f in findings(root, "code"))


def test_result_regions_allow_ranges_gold_does_not() -> None:
    assert region_problem("pdf", {"page_start": 1, "page_end": 2}, gold=False) is None
    assert region_problem("pdf", {"page_start": 1, "page_end": 2}, gold=True) is not None
    assert region_problem("image", {}, gold=True) is None
    assert region_problem("conversation", {"turn_start": 3, "turn_end": 2}, gold=False)
