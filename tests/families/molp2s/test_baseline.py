"""The `molp2s_rdkit` baseline: transparent rules on hand-built cases and on the embedded sample."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchreg.core import registry
from benchreg.core.errors import BenchregError
from benchreg.core.types import Sample
from benchreg.families.molp2s import baseline
from benchreg.families.molp2s.baseline import choose_candidate

SAMPLE = Path(baseline.__file__).resolve().parent / "sample"
TOLYL = ["Cc1ccc(C)cc1", "Cc1ccc(O)cc1", "Cc1ccc(C#N)cc1"]  # 3, 5 and 6 carbon peaks


def task(candidates: list[str], **properties: Any) -> dict[str, Any]:
    return {
        "record_id": "t1",
        "masked_smiles": "[*]c1ccccc1",
        "mask": {"token": "[*]", "attachment_points": 1, "masked_heavy_atoms": 1},
        "properties": properties,
        "candidate_completed_smiles": candidates,
    }


def carbon(representation: str, peaks: list[dict] | None = None, atoms: list[dict] | None = None):
    obj: dict[str, Any] = {"unit": "ppm", "representation": representation}
    if atoms is not None:
        obj["atoms"] = atoms
    else:
        obj["peaks"] = peaks
    return obj


def test_carbon_degeneracy_picks_the_matching_symmetry() -> None:
    xylene = carbon("degeneracy", [{"shift": 134.7, "degeneracy": 2},
                                   {"shift": 129.0, "degeneracy": 4},
                                   {"shift": 21.0, "degeneracy": 2}])
    assert choose_candidate(task(TOLYL, carbon_nmr=xylene)) == (0, "carbon_nmr_degeneracy")
    cresol = carbon("degeneracy", [{"shift": s, "degeneracy": d} for s, d in
                                   [(153.0, 1), (130.0, 2), (130.1, 1), (115.0, 2), (20.5, 1)]])
    assert choose_candidate(task(TOLYL, carbon_nmr=cresol)) == (1, "carbon_nmr_degeneracy")


def test_carbon_peaks_only_uses_the_count() -> None:
    six = carbon("peaks", [{"shift": s} for s in (143.0, 132.0, 129.8, 119.0, 109.0, 21.7)])
    assert choose_candidate(task(TOLYL, carbon_nmr=six)) == (2, "carbon_nmr_peaks")


def test_carbon_atom_wise_uses_atom_counts_and_indices() -> None:
    # p-xylene: carbons 0..7, three distinct shifts
    shifts = {0: 21.0, 1: 134.7, 2: 129.0, 3: 129.0, 4: 134.7, 5: 21.0, 6: 129.0, 7: 129.0}
    rows = [{"atom_index": i, "element": "C", "shift": s} for i, s in shifts.items()]
    assert choose_candidate(task(TOLYL, carbon_nmr=carbon("atom", atoms=rows))) == (
        0, "carbon_nmr_atom",
    )


def test_proton_integration_reads_environments() -> None:
    candidates = ["CCC", "CCO", "CCN"]  # integrations (6, 2), (3, 2, 1), (3, 2, 2)
    peaks = [{"shift": 2.7, "integration": 2}, {"shift": 1.1, "integration": 3},
             {"shift": 1.3, "integration": 2}]
    prop = {"unit": "ppm", "representation": "integration", "peaks": peaks}
    assert choose_candidate(task(candidates, proton_nmr=prop)) == (2, "proton_nmr_integration")
    peaks = [{"shift": 3.7, "integration": 2}, {"shift": 1.2, "integration": 3},
             {"shift": 2.1, "integration": 1}]
    prop = {"unit": "ppm", "representation": "integration", "peaks": peaks}
    assert choose_candidate(task(candidates, proton_nmr=prop)) == (1, "proton_nmr_integration")


def test_proton_atom_wise_counts_hydrogens() -> None:
    candidates = ["CCC", "CCO", "CCN"]
    # ethylamine in Chem.AddHs numbering: heavy atoms 0-2, hydrogens 3..9
    rows = [{"atom_index": i, "element": "H", "shift": s}
            for i, s in zip(range(3, 10), (1.1, 1.1, 1.1, 2.7, 2.7, 1.3, 1.3), strict=True)]
    prop = {"unit": "ppm", "representation": "atom", "atoms": rows}
    assert choose_candidate(task(candidates, proton_nmr=prop)) == (2, "proton_nmr_atom")


def test_infrared_bands_pick_the_functional_group() -> None:
    candidates = ["Oc1ccccc1", "N#Cc1ccccc1", "O=Cc1ccccc1"]
    nitrile = {"unit": "cm^-1", "values": "illustrative", "bands": [
        {"position": 3050.0, "intensity": "weak"}, {"position": 2229.0, "intensity": "medium"},
        {"position": 1490.0, "intensity": "medium"}, {"position": 1000.0, "intensity": "weak"}]}
    assert choose_candidate(task(candidates, infrared=nitrile)) == (1, "infrared_bands")
    aldehyde = {"unit": "cm^-1", "bands": [
        {"position": 3050.0, "intensity": "weak"}, {"position": 2750.0, "intensity": "medium"},
        {"position": 1703.0, "intensity": "strong"}, {"position": 1490.0, "intensity": "medium"},
        {"position": 1000.0, "intensity": "weak"}]}
    assert choose_candidate(task(candidates, infrared=aldehyde)) == (2, "infrared_bands")


def test_without_usable_evidence_the_simplest_candidate_wins() -> None:
    candidates = ["CCc1ccccc1", "Cc1ccccc1", "Oc1ccccc1"]  # 8, 7 and 7 heavy atoms; toluene lighter
    assert choose_candidate(task(candidates)) == (1, "structure_only")
    dipole = {"value": 1.5, "unit": "D", "values": "illustrative"}
    assert choose_candidate(task(candidates, dipole=dipole)) == (1, "structure_only")


def test_ties_are_broken_structurally_and_said_so() -> None:
    candidates = ["Oc1ccccc1", "Fc1ccccc1", "Cc1ccccc1"]  # phenol and fluorobenzene: 4 peaks each
    four = carbon("peaks", [{"shift": s} for s in (155.0, 129.5, 121.0, 115.0)])
    index, rule = choose_candidate(task(candidates, carbon_nmr=four))
    assert (index, rule) == (0, "carbon_nmr_peaks+structure_tiebreak")  # phenol is lighter


def test_evidence_is_combined() -> None:
    candidates = ["Oc1ccccc1", "Fc1ccccc1", "Cc1ccccc1"]
    four = carbon("peaks", [{"shift": s} for s in (163.0, 130.0, 124.0, 115.5)])
    ir = {"unit": "cm^-1", "bands": [{"position": 3050.0, "intensity": "weak"},
                                     {"position": 1495.0, "intensity": "medium"},
                                     {"position": 1222.0, "intensity": "strong"},
                                     {"position": 1000.0, "intensity": "weak"}]}
    index, rule = choose_candidate(task(candidates, carbon_nmr=four, infrared=ir))
    assert (index, rule) == (1, "carbon_nmr_peaks+infrared_bands")


def test_unparseable_candidates_and_malformed_properties_do_not_crash() -> None:
    candidates = ["C1CC", "CCO"]
    prop = {"representation": "integration", "peaks": [{"shift": 1.0, "integration": "x"}]}
    assert choose_candidate(task(candidates, proton_nmr=prop))[0] == 1
    assert choose_candidate(task(candidates, carbon_nmr="not an object")) == (1, "structure_only")
    assert choose_candidate(task([])) == (0, "no_candidates")


def test_factory_is_registered_and_returns_predictions() -> None:
    make = registry.baselines.get("molp2s_rdkit")
    ctx = SimpleNamespace(task=SimpleNamespace(name="molp2s/carbon_nmr_peaks"))
    answer = make(ctx)
    six = carbon("peaks", [{"shift": s} for s in range(6)])
    sample = Sample(id="t1", input=task(TOLYL, carbon_nmr=six), gold=2)
    prediction = answer(sample)
    assert (prediction.sample_id, prediction.answer, prediction.raw_text) == ("t1", 2, None)
    assert prediction.metadata == {"rule": "carbon_nmr_peaks"}
    with pytest.raises(BenchregError, match="takes no parameters"):
        make(ctx, temperature=0.5)


# --- on the embedded sample ----------------------------------------------------------------------


def accuracy(directory: str, view: str) -> float:
    folder = SAMPLE / "data" / directory
    tasks = [json.loads(line) for line in (folder / f"{view}.jsonl").read_text().splitlines()]
    labels = {
        row["record_id"]: row["label"]
        for row in map(json.loads, (folder / f"{view}.labels.jsonl").read_text().splitlines())
    }
    return sum(choose_candidate(t)[0] == labels[t["record_id"]] for t in tasks) / len(tasks)


EVIDENCE_DIRECTORIES = [
    "infrared", "proton_nmr_integration", "proton_nmr_atom", "carbon_nmr_degeneracy",
    "carbon_nmr_atom", "magnetic_resonance", "vibrational", "all_properties",
]


@pytest.mark.parametrize("directory", EVIDENCE_DIRECTORIES)
def test_baseline_reads_the_evidence_on_the_sample(directory: str) -> None:
    """Above chance (about 0.27 here) with the correct property; follows the donor."""
    assert accuracy(directory, "correct") >= 0.6
    assert accuracy(directory, "counterfactual") >= 0.6
    assert accuracy(directory, "shuffled") < accuracy(directory, "correct") - 0.25


def test_baseline_ignores_properties_it_has_no_rule_for() -> None:
    for view in ("correct", "shuffled"):
        assert accuracy("dipole", view) == accuracy("gap", view) == accuracy("electronic", view)
