"""The MolP2S generator and the embedded sample it produced."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from rdkit import Chem

from benchreg.families.molp2s import chem
from builders.molp2s import generate, make_sample

PROJECT = Path(__file__).resolve().parents[3]
SAMPLE = PROJECT / "benchreg" / "families" / "molp2s" / "sample"

SPEC_PROPERTIES = {
    "dipole": {"dipole"},
    "gap": {"gap"},
    "infrared": {"infrared"},
    "raman": {"raman"},
    "ultraviolet_visible": {"ultraviolet_visible"},
    "proton_nmr_peaks": {"proton_nmr"},
    "proton_nmr_integration": {"proton_nmr"},
    "proton_nmr_atom": {"proton_nmr"},
    "carbon_nmr_peaks": {"carbon_nmr"},
    "carbon_nmr_degeneracy": {"carbon_nmr"},
    "carbon_nmr_atom": {"carbon_nmr"},
    "electronic": {"dipole", "gap", "ultraviolet_visible"},
    "magnetic_resonance": {"proton_nmr", "carbon_nmr"},
    "vibrational": {"infrared", "raman"},
    "all_properties": {
        "dipole", "gap", "infrared", "raman", "ultraviolet_visible", "proton_nmr", "carbon_nmr",
    },
}


def read(root: Path, directory: str, view: str) -> tuple[list[dict], dict[str, int]]:
    folder = root / "data" / directory
    tasks = [json.loads(line) for line in (folder / f"{view}.jsonl").read_text().splitlines()]
    labels = [
        json.loads(line) for line in (folder / f"{view}.labels.jsonl").read_text().splitlines()
    ]
    by_id = {label["record_id"]: label["label"] for label in labels}
    assert len(by_id) == len(labels) == len(tasks)
    return tasks, by_id


def sample_files() -> list[tuple[str, str]]:
    return [(d, v) for d in generate.DIRECTORIES for v in generate.VIEWS]


def test_directories_match_the_specification() -> None:
    assert set(generate.DIRECTORIES) == set(SPEC_PROPERTIES)
    for directory, keys in SPEC_PROPERTIES.items():
        assert {key for key, _ in generate.DIRECTORY_PROPERTIES[directory]} == keys


@pytest.mark.parametrize(("directory", "view"), sample_files())
def test_sample_smiles_parse_and_fit_the_mask(directory: str, view: str) -> None:
    tasks, labels = read(SAMPLE, directory, view)
    assert 8 <= len(tasks) <= 20
    for task in tasks:
        mask = task["mask"]
        assert mask["attachment_points"] == 1
        token = mask["token"]
        assert token in task["masked_smiles"]
        scaffold = Chem.MolFromSmiles(task["masked_smiles"].replace(token, "[*]"))
        assert scaffold is not None, task["record_id"]
        assert sum(atom.GetAtomicNum() == 0 for atom in scaffold.GetAtoms()) == 1
        scaffold_heavy = scaffold.GetNumAtoms() - 1
        query = Chem.MolFromSmarts(task["masked_smiles"].replace(token, "[*]"))
        candidates = task["candidate_completed_smiles"]
        assert 3 <= len(candidates) <= 6
        assert len(set(candidates)) == len(candidates)
        for smiles in candidates:
            mol = Chem.MolFromSmiles(smiles)
            assert mol is not None, smiles
            assert mol.GetNumAtoms() - scaffold_heavy == mask["masked_heavy_atoms"]
            assert mol.HasSubstructMatch(query), (smiles, task["masked_smiles"])
        assert 0 <= labels[task["record_id"]] < len(candidates)


def test_sample_has_both_mask_spellings() -> None:
    tasks, _ = read(SAMPLE, "gap", "correct")
    tokens = Counter(task["mask"]["token"] for task in tasks)
    assert tokens["[*]"] > tokens["<MASK>"] > 0
    text_masked = [t for t in tasks if t["mask"]["token"] == "<MASK>"]
    assert all("*" not in t["masked_smiles"] for t in text_masked)


@pytest.mark.parametrize("directory", generate.DIRECTORIES)
def test_sample_views_pair_up(directory: str) -> None:
    correct, correct_labels = read(SAMPLE, directory, "correct")
    shuffled, shuffled_labels = read(SAMPLE, directory, "shuffled")
    counterfactual, cf_labels = read(SAMPLE, directory, "counterfactual")
    # correct and shuffled: same ids, candidates and labels; other properties of the same type
    assert [t["record_id"] for t in correct] == [t["record_id"] for t in shuffled]
    assert correct_labels == shuffled_labels
    for a, b in zip(correct, shuffled, strict=True):
        assert a["candidate_completed_smiles"] == b["candidate_completed_smiles"]
        assert a["masked_smiles"] == b["masked_smiles"]
        assert a["properties"].keys() == b["properties"].keys() == SPEC_PROPERTIES[directory]
        assert a["properties"] != b["properties"]
    # counterfactual: paired with its correct record by (masked SMILES, candidates)
    by_key = {
        (t["masked_smiles"], tuple(t["candidate_completed_smiles"])): t for t in correct
    }
    assert len(by_key) == len(correct)
    correct_ids = {t["record_id"] for t in correct}
    for task in counterfactual:
        pair = by_key[(task["masked_smiles"], tuple(task["candidate_completed_smiles"]))]
        assert task["record_id"] not in correct_ids
        assert task["record_id"].startswith(pair["record_id"] + "-cf")
        assert task["mask"] == pair["mask"]
        assert cf_labels[task["record_id"]] != correct_labels[pair["record_id"]]
        assert task["properties"] != pair["properties"]
        assert task["properties"].keys() == SPEC_PROPERTIES[directory]


@pytest.mark.parametrize(("directory", "view"), sample_files())
def test_every_property_says_what_kind_of_values_it_holds(directory: str, view: str) -> None:
    tasks, _ = read(SAMPLE, directory, view)
    for task in tasks:
        for key, prop in task["properties"].items():
            assert prop["values"] in ("computed", "illustrative"), key
            if key.endswith("_nmr"):
                assert prop["counts"] == "computed"


def _label_molecules(directory: str) -> list[tuple[dict, Chem.Mol]]:
    tasks, labels = read(SAMPLE, directory, "correct")
    cf_tasks, cf_labels = read(SAMPLE, directory, "counterfactual")
    pairs = [(t, labels[t["record_id"]]) for t in tasks]
    pairs += [(t, cf_labels[t["record_id"]]) for t in cf_tasks]
    return [
        (t["properties"], Chem.AddHs(Chem.MolFromSmiles(t["candidate_completed_smiles"][i])))
        for t, i in pairs
    ]


def test_computed_nmr_counts_match_the_labelled_molecule() -> None:
    """Integrations and degeneracies add up to the atoms of the molecule whose property it is."""
    for props, mol in _label_molecules("magnetic_resonance"):
        elements = Counter(atom.GetSymbol() for atom in mol.GetAtoms())
        assert sum(p["integration"] for p in props["proton_nmr"]["peaks"]) == elements["H"]
        assert sum(p["degeneracy"] for p in props["carbon_nmr"]["peaks"]) == elements["C"]
        assert props["proton_nmr"]["representation"] == "integration"
        assert props["carbon_nmr"]["representation"] == "degeneracy"


@pytest.mark.parametrize(
    ("directory", "element"), [("proton_nmr_atom", "H"), ("carbon_nmr_atom", "C")]
)
def test_atom_wise_indices_point_at_atoms_of_that_element(directory: str, element: str) -> None:
    for props, mol in _label_molecules(directory):
        rows = props[directory.split("_atom")[0]]["atoms"]
        indices = [row["atom_index"] for row in rows]
        expected = [a.GetIdx() for a in mol.GetAtoms() if a.GetSymbol() == element]
        assert indices == expected
        assert {row["element"] for row in rows} == {element}


def test_peak_counts_match_rdkit_symmetry() -> None:
    tasks, labels = read(SAMPLE, "carbon_nmr_peaks", "correct")
    for task in tasks:
        mol = Chem.MolFromSmiles(task["candidate_completed_smiles"][labels[task["record_id"]]])
        ranks = Chem.CanonicalRankAtoms(mol, breakTies=False)
        classes = {r for a, r in zip(mol.GetAtoms(), ranks, strict=True) if a.GetSymbol() == "C"}
        assert len(task["properties"]["carbon_nmr"]["peaks"]) == len(classes)


def test_labels_are_spread_over_candidate_positions() -> None:
    _, labels = read(SAMPLE, "gap", "correct")
    assert len(set(labels.values())) >= 3


def test_full_size_release_has_the_specified_counts(tmp_path: Path) -> None:
    counts = generate.generate_release(
        tmp_path,
        n_records=generate.REFERENCE_RECORDS,
        counterfactual_sizes=generate.REFERENCE_COUNTERFACTUAL,
        seed=0,
    )
    larger = {
        "gap", "proton_nmr_peaks", "proton_nmr_integration", "proton_nmr_atom",
        "carbon_nmr_peaks", "carbon_nmr_degeneracy", "carbon_nmr_atom", "magnetic_resonance",
    }
    for directory in SPEC_PROPERTIES:
        expected = {
            "correct": 136, "shuffled": 136, "counterfactual": 258 if directory in larger else 240,
        }
        assert counts[directory] == expected
        for view, n in expected.items():
            tasks, labels = read(tmp_path, directory, view)
            assert len(tasks) == len(labels) == n
        correct, shuffled = (read(tmp_path, directory, v)[0] for v in ("correct", "shuffled"))
        assert all(
            a["properties"] != b["properties"] for a, b in zip(correct, shuffled, strict=True)
        )
    masked = [
        (t["masked_smiles"], tuple(t["candidate_completed_smiles"]))
        for t in read(tmp_path, "gap", "correct")[0]
    ]
    assert len(set(masked)) == 136


def test_generation_is_seeded(tmp_path: Path) -> None:
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        generate.generate_release(tmp_path / name, n_records=10, counterfactual_sizes=12, seed=seed)
    assert make_sample.differences(tmp_path / "a", tmp_path / "b") == []
    assert make_sample.differences(tmp_path / "a", tmp_path / "c")


def test_regenerating_the_sample_is_byte_identical(tmp_path: Path) -> None:
    assert make_sample.main(["--out", str(tmp_path)]) == 0
    assert make_sample.differences(SAMPLE, tmp_path) == []
    assert (SAMPLE / "README.md").read_text().count("NOT third-party data") == 1


def test_impossible_counterfactual_size_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="counterfactual records requested"):
        generate.generate_release(tmp_path, n_records=4, counterfactual_sizes=50)
    with pytest.raises(ValueError, match="lacks"):
        generate.generate_release(tmp_path, n_records=4, counterfactual_sizes={"gap": 4})


def test_building_blocks_are_valid() -> None:
    from builders.molp2s.building_blocks import GROUPS_BY_SIZE, SCAFFOLDS

    for scaffold in SCAFFOLDS:
        assert chem.is_valid_masked_smiles(scaffold), scaffold
    for size, groups in GROUPS_BY_SIZE.items():
        assert len(set(groups)) == len(groups) >= 6
        assert all(chem.heavy_atom_count(g) == size for g in groups)
