"""The use-claim rule (spec 003, issues 13 and 19): hand-built sweeps, then systems run on a
generated full-size release (never-flipping and property-using systems, three views and four).

Claims only with their evidence (issue 19, item 5): without the structure_only run the verdict is
"not testable: needs the structure_only view", never "supported"; a bundle's verdict is about the
bundle as a whole and never uses the words of a one-property use claim."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchreg.core.analysis import DuplicateJobError, JobRecord, read_jobs, run_analyses
from benchreg.families.molp2s.analysis import cross_view

N = 20


def job(
    tmp: Path, view: str, rows: list[dict[str, Any]], model: str = "m", task: str = "gap"
) -> JobRecord:
    metrics = {"task": f"molp2s/{task}", "family": "molp2s", "view": view, "model": model}
    record = JobRecord(tmp / f"{model}_{task}_{view}", metrics, {})
    record.__dict__["samples"] = rows  # cached_property slot: no files needed
    return record


def rows(hit: list[bool], view: str, answers: list[int] | None = None) -> list[dict[str, Any]]:
    out = []
    for i, h in enumerate(hit):
        gold = 1 if view == "counterfactual" else 0
        answer = answers[i] if answers else (gold if h else 3)
        out.append(
            {
                "id": f"r{i}" + ("-cf" if view == "counterfactual" else ""),
                "gold": gold,
                "answer": answer,
                "status": "ok",
                "score": 1.0 if h else 0.0,
                "meta": {"n_candidates": 4, "scaffold": f"s{i}"},
            }
        )
    return out


def sweep(
    tmp: Path,
    correct: bool,
    shuffled: bool,
    donor: bool,
    so_answer: int | None,
    model: str = "m",
    task: str = "gap",
) -> list[JobRecord]:
    jobs = [
        job(tmp, "correct", rows([correct] * N, "correct"), model, task),
        job(tmp, "shuffled", rows([shuffled] * N, "shuffled"), model, task),
        job(tmp, "counterfactual", rows([donor] * N, "counterfactual"), model, task),
    ]
    if so_answer is not None:
        so_rows = rows([so_answer == 0] * N, "structure_only", [so_answer] * N)
        jobs.append(job(tmp, "structure_only", so_rows, model, task))
    return jobs


def claim_of(report: Any, model: str = "m", task: str = "molp2s/gap") -> dict[str, Any]:
    return report.data["models"][model][task]


def test_property_user_is_supported(tmp_path: Path) -> None:
    report = cross_view(sweep(tmp_path, correct=True, shuffled=False, donor=True, so_answer=0))
    claim = claim_of(report)
    drop, flip = claim["tests"]["shuffle_drop"], claim["tests"]["donor_flip"]
    assert drop["drop"] == 1.0 and drop["lost"] == N and drop["gained"] == 0
    assert drop["p_one_sided"] == pytest.approx(0.5**N)
    assert flip["baseline"] == "structure_only" and flip["n_pairs"] == N
    assert flip["to_donor"] == N and flip["from_donor"] == 0
    assert claim["donor_vs_chance"]["chance"] == 0.25
    assert claim["verdict"] == "supported" and claim["use_claim"] == "supported"
    assert "Use claim supported iff" in report.markdown
    assert "one-sided" in report.markdown and f"n={N} pairs" in report.markdown


def test_structure_reader_is_not_supported(tmp_path: Path) -> None:
    # Same accuracy everywhere, and the structure-only choice already lands on the donor.
    claim = claim_of(
        cross_view(sweep(tmp_path, correct=True, shuffled=True, donor=True, so_answer=1))
    )
    assert claim["tests"]["shuffle_drop"]["drop"] == 0.0
    assert claim["tests"]["donor_flip"]["unchanged"] == N
    assert claim["verdict"] == "not supported"
    assert "shuffle drop" in claim["use_claim"] and "flip" in claim["use_claim"]


def test_without_structure_only_the_verdict_is_not_testable(tmp_path: Path) -> None:
    """The correct-view answer is no baseline for the flip: the verdict needs structure_only."""
    claim = claim_of(
        cross_view(sweep(tmp_path, correct=True, shuffled=False, donor=True, so_answer=None))
    )
    assert claim["tests"]["shuffle_drop"]["passed"] is True
    assert claim["tests"]["donor_flip"] == {
        "passed": None,
        "missing_views": ["structure_only"],
    }
    assert claim["verdict"] == "not testable"
    assert claim["use_claim"] == claim["text"] == "not testable: needs the structure_only view"
    assert "supported" not in claim["use_claim"]


def test_missing_views_are_not_testable(tmp_path: Path) -> None:
    claim = claim_of(cross_view([job(tmp_path, "correct", rows([True] * N, "correct"))]))
    assert claim["verdict"] == "not testable"
    assert claim["use_claim"] == (
        "not testable: needs the shuffled, counterfactual and structure_only views"
    )
    only_cf = [job(tmp_path, "counterfactual", rows([True] * N, "counterfactual"))]
    claim = claim_of(cross_view(only_cf))
    assert claim["use_claim"] == (
        "not testable: needs the correct, shuffled and structure_only views"
    )


def test_a_failed_test_is_not_supported_even_when_the_other_is_missing(tmp_path: Path) -> None:
    jobs = sweep(tmp_path, correct=True, shuffled=True, donor=True, so_answer=None)[:2]
    claim = claim_of(cross_view(jobs))
    assert claim["verdict"] == "not supported"
    assert claim["use_claim"] == (
        "not supported: no significant shuffle drop (p=1); donor-directed flip not testable: "
        "needs the counterfactual and structure_only views"
    )


def test_bundles_get_a_bundle_verdict(tmp_path: Path) -> None:
    jobs = sweep(tmp_path, True, False, True, 0, task="electronic")
    claim = claim_of(cross_view(jobs), task="molp2s/electronic")
    assert claim["scope"] == {
        "kind": "bundle",
        "directory": "electronic",
        "properties": ["dipole", "gap", "ultraviolet_visible"],
    }
    assert claim["verdict"] == "bundle: both tests pass"
    assert claim["text"] == (
        "bundle electronic (dipole, gap, ultraviolet_visible) as a whole: shuffle drop and "
        "donor-directed flip both pass; this is about the bundle, not about any one of its "
        "properties"
    )
    assert "use_claim" not in claim  # a bundle makes no one-property use claim
    spec = {"data": ["data/my_set"], "prompt": {"templates": {"user": "all_properties_user.txt"}}}
    jobs[0].provenance["task_spec"] = spec
    assert claim_of(cross_view(jobs), task="molp2s/electronic")["scope"]["kind"] == "bundle"


RESERVED = ("supported", "use claim", "uses")  # spec 003's words for a one-property use claim


BUNDLE_DIRECTORIES = ["electronic", "magnetic_resonance", "vibrational", "all_properties"]


@pytest.mark.parametrize("task", BUNDLE_DIRECTORIES)
@pytest.mark.parametrize(
    ("shuffled", "so_answer", "verdict"),
    [
        (False, 0, "bundle: both tests pass"),
        (True, 0, "bundle: a test fails"),
        (True, 1, "bundle: a test fails"),
        (False, None, "bundle: not testable"),
    ],
)
def test_a_bundle_verdict_never_uses_the_words_of_a_use_claim(
    tmp_path: Path, task: str, shuffled: bool, so_answer: int | None, verdict: str
) -> None:
    report = cross_view(sweep(tmp_path, True, shuffled, True, so_answer, task=task))
    claim = claim_of(report, task=f"molp2s/{task}")
    assert claim["verdict"] == verdict
    text = claim["text"]
    assert f"bundle {task} (" in text and "not about any one of its properties" in text
    for word in RESERVED:
        assert word not in claim["verdict"].lower() and word not in text.lower()
    (row,) = [line for line in report.markdown.splitlines() if line.startswith(f"| {task} |")]
    cell = row.split("|")[-2]
    assert "bundle" in cell and not any(word in cell.lower() for word in RESERVED)


def test_the_report_figure_says_supported_only_for_one_property(tmp_path: Path) -> None:
    from benchreg.families.molp2s.report import _short

    gap = claim_of(cross_view(sweep(tmp_path / "g", True, False, True, 0)))
    bundle = claim_of(
        cross_view(sweep(tmp_path / "e", True, False, True, 0, task="electronic")),
        task="molp2s/electronic",
    )
    assert _short(gap) == "SUPPORTED" and _short(bundle) == "bundle: both pass"
    untestable = claim_of(cross_view(sweep(tmp_path / "n", True, False, True, None)))
    assert _short(untestable) == "not testable"


def test_same_named_models_are_never_combined(tmp_path: Path) -> None:
    """A's correct and shuffled views with B's counterfactual view, both shown under one name
    (issue 13): two models, each not testable; never one 'supported' model."""
    a = sweep(tmp_path / "a", correct=True, shuffled=False, donor=False, so_answer=None)[:2]
    b = sweep(tmp_path / "b", correct=False, shuffled=False, donor=True, so_answer=0)[2:]
    for j in a:
        j.metrics["model_id"] = "predictions:sha256=" + "a" * 64
    for j in b:
        j.metrics["model_id"] = "predictions:sha256=" + "b" * 64
    report = cross_view([*a, *b])
    assert sorted(report.data["models"]) == [
        "m [predictions:sha256=aaaaaaaaaaaa]",
        "m [predictions:sha256=bbbbbbbbbbbb]",
    ]
    verdicts = [c["verdict"] for m in report.data["models"].values() for c in m.values()]
    assert verdicts == ["not testable", "not testable"]


def test_two_jobs_of_one_model_task_and_view_are_a_named_error(tmp_path: Path) -> None:
    jobs = sweep(tmp_path, True, False, True, 0)
    twin = job(tmp_path / "again", "shuffled", rows([True] * N, "shuffled"))
    with pytest.raises(DuplicateJobError) as caught:
        cross_view([*jobs, twin])
    assert str(jobs[1].dir) in str(caught.value) and str(twin.dir) in str(caught.value)


# --- systems run on a generated full-size release ---------------------------------------------

VIEWS = ("correct", "shuffled", "counterfactual", "structure_only")


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def release(molp2s_full_release: Path) -> Path:
    return molp2s_full_release


def _answers(root: Path, directory: str, kind: str) -> dict[str, dict[str, int]]:
    """Per view, record_id -> the answer of a made-up system.

    never_flips: a fixed choice per scaffold, f (the source for every fourth record, else the
    donor of the record's first counterfactual: a structural preference that lands on donors
    well above chance), given in the correct, counterfactual and structure_only views; a wrong
    answer in the shuffled view, so the shuffle drop is there and the flip test decides.
    reads_correct_never_flips (the system of issue 19): the source with the correct property, a
    wrong answer with a shuffled one, and with a counterfactual property its structure-only
    answer f (it never follows the counterfactual evidence); structure_only: f.
    uses_property: the source with the correct property, a wrong answer with a shuffled one,
    the donor with a counterfactual one, candidate 0 without a property.
    """
    folder = root / "data" / directory
    labels = {r["record_id"]: r["label"] for r in _read(folder / "correct.labels.jsonl")}
    sizes = {
        r["record_id"]: len(r["candidate_completed_smiles"])
        for r in _read(folder / "correct.jsonl")
    }
    donors = {r["record_id"]: r["label"] for r in _read(folder / "counterfactual.labels.jsonl")}
    base_of = {cf: cf.rsplit("-cf", 1)[0] for cf in donors}
    first_donor: dict[str, int] = {}
    for cf, donor in donors.items():
        first_donor.setdefault(base_of[cf], donor)
    wrong = {rid: (label + 1) % sizes[rid] for rid, label in labels.items()}
    f = {
        rid: label if i % 4 == 0 else first_donor.get(rid, label)
        for i, (rid, label) in enumerate(labels.items())
    }
    if kind in ("never_flips", "reads_correct_never_flips"):
        return {
            "correct": f if kind == "never_flips" else dict(labels),
            "shuffled": wrong,
            "counterfactual": {cf: f[base_of[cf]] for cf in donors},
            "structure_only": f,
        }
    return {
        "correct": dict(labels),
        "shuffled": wrong,
        "counterfactual": dict(donors),
        "structure_only": dict.fromkeys(labels, 0),
    }


def _run_views(
    root: Path, sweep_dir: Path, directory: str, kind: str, views: tuple[str, ...]
) -> None:
    from benchreg import RunOptions, load_task, run_task
    from benchreg.core.outputs import write_run

    answers = _answers(root, directory, kind)
    for view in views:
        path = sweep_dir.parent / f"{kind}_files" / directory / f"{view}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            json.dumps({"record_id": rid, "selected_candidate_index": index})
            for rid, index in answers[view].items()
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        # one file per view: `model.label` ties the files of one system together
        model = {"name": "predictions", "path": str(path), "label": kind}
        result = run_task(
            load_task(f"molp2s/{directory}"),
            view=view,
            system_cfg=model,
            roots={"molp2s": str(root)},
            options=RunOptions(n_boot=0, progress=False),
        )
        folder = sweep_dir / f"{kind}_{directory}_{view}"
        folder.mkdir(parents=True)
        write_run(folder, result, {"task": f"molp2s/{directory}", "view": view, "model": model})


def _claims(sweep_dir: Path) -> dict[str, dict[str, Any]]:
    (report,) = run_analyses(read_jobs(sweep_dir))
    assert report.error is None, report.error
    return report.data["models"]


@pytest.mark.parametrize("views", [VIEWS[:3], VIEWS], ids=["three_views", "with_structure_only"])
@pytest.mark.parametrize("directory", ["electronic", "gap"])
def test_a_never_flipping_system_is_never_supported(
    release: Path, tmp_path: Path, views: tuple[str, ...], directory: str
) -> None:
    sweep_dir = tmp_path / "sweep"
    _run_views(release, sweep_dir, directory, "never_flips", views)
    claim = _claims(sweep_dir)["never_flips"][f"molp2s/{directory}"]
    drop, flip = claim["tests"]["shuffle_drop"], claim["tests"]["donor_flip"]
    assert drop["passed"] and drop["n_pairs"] == 136  # the shuffle drop is there ...
    # ... and donors are hit well above chance (the old rule's test), yet no flip: not supported
    assert claim["donor_vs_chance"]["p_vs_chance"] < 0.05
    bundle = directory == "electronic"
    if len(views) == 3:
        assert flip == {"passed": None, "missing_views": ["structure_only"]}
        assert claim["verdict"] == ("bundle: not testable" if bundle else "not testable")
        assert "not testable: needs the structure_only view" in claim["text"]
        return
    assert flip["n_pairs"] == flip["n_counterfactual"] == (258 if directory == "gap" else 240)
    assert flip["to_donor"] == flip["from_donor"] == 0 and flip["p_one_sided"] == 1.0
    assert flip["baseline"] == "structure_only"
    assert claim["verdict"] == ("bundle: a test fails" if bundle else "not supported")
    assert "no significant donor-directed flip (p=1)" in claim["text"]


@pytest.mark.parametrize("directory", ["gap", "electronic"])
def test_the_issue_never_flip_system_without_structure_only_is_not_testable(
    release: Path, tmp_path: Path, directory: str
) -> None:
    """Issue 19: a system that reads the correct property but answers every counterfactual
    record with its structure-only answer was "supported (flip measured against the
    correct-view answer: weaker baseline)": against its correct answers (the sources) its
    structural choices look like moves onto the donor. Now, without the structure_only run, it
    is "not testable: needs the structure_only view"; with it, the flip is 0 to 0 and fails."""
    three = tmp_path / "three"
    _run_views(release, three, directory, "reads_correct_never_flips", VIEWS[:3])
    claim = _claims(three)["reads_correct_never_flips"][f"molp2s/{directory}"]
    assert claim["tests"]["shuffle_drop"]["passed"] is True
    answers = _answers(release, directory, "reads_correct_never_flips")
    labels = _read(release / "data" / directory / "counterfactual.labels.jsonl")
    donors = {r["record_id"]: r["label"] for r in labels}
    looks_like_moves = sum(answers["counterfactual"][cf] == d for cf, d in donors.items())
    assert looks_like_moves > 50  # what the old correct-view baseline counted as flips
    bundle = directory == "electronic"
    if bundle:
        assert claim["verdict"] == "bundle: not testable"
        assert claim["text"].startswith("bundle electronic (dipole, gap, ultraviolet_visible)")
    else:
        assert claim["verdict"] == "not testable"
        assert claim["use_claim"] == "not testable: needs the structure_only view"
    assert "not testable: needs the structure_only view" in claim["text"]
    assert "supported" not in claim["text"] and "weaker" not in claim["text"]

    four = tmp_path / "four"
    _run_views(release, four, directory, "reads_correct_never_flips", VIEWS)
    claim = _claims(four)["reads_correct_never_flips"][f"molp2s/{directory}"]
    flip = claim["tests"]["donor_flip"]
    assert flip["baseline"] == "structure_only"
    assert flip["to_donor"] == flip["from_donor"] == 0  # its counterfactual answers = its own
    assert claim["verdict"] == ("bundle: a test fails" if bundle else "not supported")


@pytest.mark.parametrize("views", [VIEWS[:3], VIEWS], ids=["three_views", "with_structure_only"])
def test_a_property_user_gets_a_bundle_verdict_only_with_structure_only(
    release: Path, tmp_path: Path, views: tuple[str, ...]
) -> None:
    sweep_dir = tmp_path / "sweep"
    _run_views(release, sweep_dir, "electronic", "uses_property", views)
    (report,) = run_analyses(read_jobs(sweep_dir))
    claim = report.data["models"]["uses_property"]["molp2s/electronic"]
    if len(views) == 3:
        assert claim["verdict"] == "bundle: not testable"
        assert "not testable: needs the structure_only view" in claim["text"]
    else:
        assert claim["verdict"] == "bundle: both tests pass"
    assert "bundle electronic" in claim["text"] and "supported" not in claim["text"]
    assert len(report.data["model_ids"]["uses_property"]) == len(views)  # one file per view
    assert "model identities (labelled files)" in report.markdown


def test_two_systems_with_same_named_files_keep_their_own_verdicts(
    release: Path, tmp_path: Path
) -> None:
    sweep_dir = tmp_path / "sweep"
    _run_views(release, sweep_dir, "gap", "never_flips", VIEWS)
    _run_views(release, sweep_dir, "gap", "uses_property", VIEWS)
    claims = _claims(sweep_dir)
    assert claims["never_flips"]["molp2s/gap"]["verdict"] == "not supported"
    assert claims["uses_property"]["molp2s/gap"]["verdict"] == "supported"
